/**
 * Watchers on DynamoDB: one item per (resource, run step), `WATCH#<resourceKey>` / `<runId>#<stepId>` (the tenant's
 * own partition: table-layout.ts `tenantScoped`), so that a
 * ResourceChanged event finds every step watching its key with one query. Written with each plan revision; an item
 * is never removed (a later revision may stop watching: the invalidator checks the run's current plan).
 */
import type { Store } from '../../ports/store.ts';
import { ENTITY_ATTRIBUTE, stringItem } from './dynamo-codec.ts';
import { ExpressionScope } from './dynamo-expressions.ts';
import { conditionalPut, type DynamoContext, queryAll } from './dynamo-ops.ts';
import { itemKeys, PARTITION_KEY } from './table-layout.ts';

type WatchOperations = Pick<Store, 'putWatches' | 'listWatchers'>;

/** How many puts `putWatches` keeps in flight. */
const PUT_CONCURRENCY = 16;

export function watchOperations(ctx: DynamoContext): WatchOperations {
  const putWatch = async (tenant: string, runId: string, stepId: string, resourceKey: string): Promise<void> => {
    const scope = new ExpressionScope();
    const item = stringItem({
      ...itemKeys.watch(tenant, resourceKey, runId, stepId),
      [ENTITY_ATTRIBUTE]: 'watch',
      resourceKey,
      runId,
      stepId,
      createdAt: ctx.now().toISOString(),
    });
    // An existing entry is the same entry: a repeated revision write leaves it alone.
    await conditionalPut(ctx, item, scope, scope.notExists(PARTITION_KEY));
  };

  return {
    async putWatches(tenant, runId, entries) {
      const unique = [...new Map(entries.map((e) => [`${e.resourceKey}\u0000${e.stepId}`, e])).values()];
      for (let i = 0; i < unique.length; i += PUT_CONCURRENCY) {
        await Promise.all(
          unique.slice(i, i + PUT_CONCURRENCY).map((e) => putWatch(tenant, runId, e.stepId, e.resourceKey)),
        );
      }
    },
    async listWatchers(tenant, resourceKey) {
      const scope = new ExpressionScope();
      const key = scope.equals(PARTITION_KEY, { S: itemKeys.watchPartition(tenant, resourceKey) }, 'pk');
      const items = await queryAll(ctx, { KeyConditionExpression: key, ConsistentRead: true, ...scope.parts() });
      return items.flatMap((item) => {
        const runId = item.runId?.S;
        const stepId = item.stepId?.S;
        return runId === undefined || stepId === undefined ? [] : [{ runId, stepId }];
      });
    },
  };
}
