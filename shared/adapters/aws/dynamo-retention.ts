/**
 * Retention on DynamoDB (shared/ports/retention.ts).
 *
 * Why only the run item carries an expiry. Stamping every item of a run when it ends would rewrite the whole run
 * (a write per step, attempt and event: `bench:engine` counts them), and a provisional expiry on the items written
 * while it runs (created + a longest lifetime + retention) would guess wrong for a run paused for a person or
 * reopened by an invalidation months later, deleting part of a live run. The run item is written anyway by the
 * batch that ends the run (the projection writes the whole item), so it takes `expiresAt` at no cost
 * (dynamo-codec.ts: `runExpiresAt`), loses it when the run reopens, and everything else of the run is found from it
 * when it goes: the run's partition (one Query), its step partitions (all it may have), its blob partitions
 * (dynamo-blobs.ts), its approvals (by their references), its watches (from its plan revisions) and its run key
 * (named on the run item).
 *
 * Deployed, TTL deletes the run item; the table's stream delivers the removal (a REMOVE by the DynamoDB service,
 * with the old image: EXPIRED_RUN_STREAM_FILTER) to the outbox Lambda, which calls `purgeRun`. Embedded, the
 * runtime's sweep plays TTL's part (infra/local/retention-sweep.ts) and calls it the same way. Items outside runs
 * that carry an expiry (idempotency records, plan jobs, replies, their blob parts) simply expire.
 */
import { DEFAULT_TENANT } from '../../config/defaults.ts';
import type { Retention } from '../../ports/retention.ts';
import { decodePlanRevision } from './dynamo-codec.ts';
import { ExpressionScope } from './dynamo-expressions.ts';
import { batchDeleteItems, conditionalDelete, type DynamoContext, type QueryInput, queryAll } from './dynamo-ops.ts';
import { type ItemKey, itemKeys, PARTITION_KEY, SORT_KEY, SORT_PREFIX } from './table-layout.ts';

/** The keys of every item of a partition (no attribute beyond them, so no blob is read back). */
async function partitionKeys(ctx: DynamoContext, partition: string): Promise<ItemKey[]> {
  const scope = new ExpressionScope();
  const key = scope.equals(PARTITION_KEY, { S: partition }, 'pk');
  const projection = `${scope.name(PARTITION_KEY)}, ${scope.name(SORT_KEY)}`;
  const input: QueryInput = { KeyConditionExpression: key, ProjectionExpression: projection, ...scope.parts() };
  const items = await queryAll(ctx, input);
  return items.map((item) => ({ PK: item[PARTITION_KEY]?.S ?? partition, SK: item[SORT_KEY]?.S ?? '' }));
}

/** The watches the run's plan revisions declared (written by its projections: putWatches). */
async function watchKeys(
  ctx: DynamoContext,
  tenant: string,
  runId: string,
  revisions: readonly ItemKey[],
): Promise<ItemKey[]> {
  const keys: ItemKey[] = [];
  for (const revision of revisions) {
    const scope = new ExpressionScope();
    const pk = scope.equals(PARTITION_KEY, { S: revision.PK }, 'pk');
    const sk = scope.equals(SORT_KEY, { S: revision.SK }, 'sk');
    const [item] = await queryAll(ctx, { KeyConditionExpression: `${pk} AND ${sk}`, ...scope.parts() }, 1);
    if (item === undefined) continue;
    for (const step of decodePlanRevision(item).plan.steps)
      for (const resourceKey of step.watches ?? []) keys.push(itemKeys.watch(tenant, resourceKey, runId, step.id));
  }
  return keys;
}

export function createDynamoRetention(ctx: DynamoContext): Retention {
  const purgeRun = async (runId: string, runKey: string | undefined, tenant = DEFAULT_TENANT): Promise<number> => {
    const items = await partitionKeys(ctx, itemKeys.runPartition(runId));
    const approvals = items
      .filter((key) => key.SK.startsWith(SORT_PREFIX.approvalRef))
      .map((key) => itemKeys.approval(key.SK.slice(SORT_PREFIX.approvalRef.length)));
    const watches = await watchKeys(
      ctx,
      tenant,
      runId,
      items.filter((key) => key.SK.startsWith(SORT_PREFIX.plan)),
    );
    // The run's item is gone, and with it how many partitions its steps were spread over: every one they may be in.
    const [parts, stepItems] = await Promise.all(
      [itemKeys.runBlobPartitions(runId), itemKeys.anyStepPartitions(runId).slice(1)].map(async (partitions) =>
        (await Promise.all(partitions.map((partition) => partitionKeys(ctx, partition)))).flat(),
      ),
    );
    // The run's own partition last: a purge cut short and repeated (the stream redelivers the removal) still finds
    // there the approval references and plan revisions that name the rest.
    await batchDeleteItems(ctx, [...watches, ...approvals, ...(parts ?? []), ...(stepItems ?? [])]);
    if (runKey !== undefined) {
      // Only the run's own claim: a key claimed again since by another run stays that run's.
      const scope = new ExpressionScope();
      await conditionalDelete(ctx, itemKeys.runKey(tenant, runKey), scope, scope.equals('runId', { S: runId }));
    }
    await batchDeleteItems(ctx, items);
    const others = (parts?.length ?? 0) + (stepItems?.length ?? 0);
    return watches.length + approvals.length + others + items.length + (runKey === undefined ? 0 : 1);
  };

  return { purgeRun };
}
