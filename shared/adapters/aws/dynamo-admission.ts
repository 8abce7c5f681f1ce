/**
 * Admission on DynamoDB (table-layout.ts): a tenant's record `ADMISSION#<tenant>` / `ADMISSION` holds a version and
 * the runs holding a slot, and each waiting run is an item of the same partition, `QUEUE#<createdAt>#<runId>`, so
 * the queue is read oldest first with one consistent query and never grows inside one item. The record is written
 * like Powertools' idempotency records: a put conditioned on the version read, its names through
 * ExpressionAttributeNames, a lost condition turned into AdmissionConflictError with the tenant and version.
 */
import { AdmissionConflictError } from '../../errors.ts';
import type { AdmissionStore } from '../../ports/admission.ts';
import { ENTITY_ATTRIBUTE, stringItem } from './dynamo-codec.ts';
import { ExpressionScope } from './dynamo-expressions.ts';
import { conditionalDelete, conditionalPut, type DynamoContext, getItem, queryAll } from './dynamo-ops.ts';
import { itemKeys, PARTITION_KEY, SORT_KEY, SORT_PREFIX } from './table-layout.ts';

const VERSION = 'version';
const RUNNING = 'running';

export function admissionOperations(ctx: DynamoContext): AdmissionStore {
  return {
    async getAdmission(tenant) {
      const item = await getItem(ctx, itemKeys.admission(tenant));
      if (item === undefined) return { version: 0, running: [] };
      return {
        version: Number(item[VERSION]?.N ?? '0'),
        running: (item[RUNNING]?.L ?? []).flatMap((value) => (value.S === undefined ? [] : [value.S])),
      };
    },

    async putAdmission(tenant, version, running) {
      const scope = new ExpressionScope();
      const item = {
        ...stringItem({ ...itemKeys.admission(tenant), [ENTITY_ATTRIBUTE]: 'admission', tenant }),
        [VERSION]: { N: String(version + 1) },
        [RUNNING]: { L: running.map((runId) => ({ S: runId })) },
        updatedAt: { S: ctx.now().toISOString() },
      };
      const condition =
        version === 0 ? scope.notExists(PARTITION_KEY) : scope.equals(VERSION, { N: String(version) }, 'read');
      if (!(await conditionalPut(ctx, item, scope, condition))) throw new AdmissionConflictError(tenant, version);
    },

    async enqueueRun(tenant, run) {
      const scope = new ExpressionScope();
      const item = stringItem({
        ...itemKeys.queuedRun(tenant, run.createdAt, run.runId),
        [ENTITY_ATTRIBUTE]: 'queuedRun',
        runId: run.runId,
        createdAt: run.createdAt,
      });
      // An entry already there is the same entry: a retried request leaves it alone.
      await conditionalPut(ctx, item, scope, scope.notExists(PARTITION_KEY));
    },

    async dequeueRun(tenant, run) {
      const scope = new ExpressionScope();
      // A missing entry (taken out already) is no error: the delete is a repeat.
      await conditionalDelete(
        ctx,
        itemKeys.queuedRun(tenant, run.createdAt, run.runId),
        scope,
        scope.exists(PARTITION_KEY),
      );
    },

    async listQueue(tenant, limit) {
      const scope = new ExpressionScope();
      const pk = scope.equals(PARTITION_KEY, { S: itemKeys.admissionPartition(tenant) }, 'pk');
      const sk = `begins_with(${scope.name(SORT_KEY)}, ${scope.value('prefix', { S: SORT_PREFIX.queue })})`;
      const items = await queryAll(
        ctx,
        { KeyConditionExpression: `${pk} AND ${sk}`, ConsistentRead: true, Limit: limit, ...scope.parts() },
        limit,
      );
      return items.flatMap((item) => {
        const runId = item.runId?.S;
        const createdAt = item.createdAt?.S;
        return runId === undefined || createdAt === undefined ? [] : [{ runId, createdAt }];
      });
    },
  };
}
