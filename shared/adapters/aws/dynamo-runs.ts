/**
 * Runs, run idempotency keys and plan revisions (immutable, so a process keeps the ones it has read or written) on
 * DynamoDB.
 */

import { DEFAULT_RUN_LIST_LIMIT, DEFAULT_TENANT } from '../../config/defaults.ts';
import { ConflictError, ValidationError } from '../../errors.ts';
import type { OutboxEntry } from '../../events/outbox.ts';
import type { Plan, RunStatus } from '../../plan/schema.ts';
import type { RunKeyClaim, RunPosition, RunRecord, RunRemovableField, Store } from '../../ports/store.ts';
import { encodeFields } from './dynamo-attributes.ts';
import {
  DEFAULT_RETENTION_SECONDS,
  decodePlanRevision,
  decodePlanSummary,
  decodeRun,
  ENTITY_ATTRIBUTE,
  encodePlanRevision,
  encodeRun,
  PLAN_SUMMARY_FIELDS,
  runCodecs,
  runExpiresAt,
  stringItem,
} from './dynamo-codec.ts';
import { ExpressionScope, UpdateBuilder } from './dynamo-expressions.ts';
import {
  conditionalPut,
  conditionalUpdate,
  type DynamoContext,
  getItem,
  queryAll,
  queryNewestAcross,
  runItemsQuery,
} from './dynamo-ops.ts';
import {
  GSI1_NAME,
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  indexKeys,
  itemKeys,
  PARTITION_KEY,
  SORT_PREFIX,
  STATUS_INDEX_NAME,
  STATUS_PARTITION_KEY,
  STATUS_SORT_KEY,
  TTL_ATTRIBUTE,
} from './table-layout.ts';

type RunOperations = Pick<
  Store,
  | 'createRun'
  | 'claimRunKey'
  | 'getRun'
  | 'updateRun'
  | 'listRuns'
  | 'putPlanRevision'
  | 'getPlanRevision'
  | 'listPlanRevisions'
>;

type StoredRevision = { readonly plan: Plan; readonly reason: string; readonly createdAt: string };

/** Plan revisions a process keeps (the oldest is dropped first); each may hold a plan of hundreds of KB. */
const CACHED_REVISIONS = 64;

/** Cached revisions are shared by every caller: frozen, so that a caller mutating one fails loudly. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export function runOperations(ctx: DynamoContext): RunOperations {
  // A revision is written once (conditional put) and never changed, so what was read or written stays true.
  const revisions = new Map<string, StoredRevision>();
  const remember = (runId: string, revision: number, stored: StoredRevision): StoredRevision => {
    if (revisions.size >= CACHED_REVISIONS) revisions.delete(revisions.keys().next().value ?? '');
    const frozen = deepFreeze(stored);
    revisions.set(`${runId}#${revision}`, frozen);
    return frozen;
  };

  const claimRunKey = async (tenant: string, key: string, runId: string, requestHash: string): Promise<RunKeyClaim> => {
    // The key item is never deleted, so a lost put always finds the winner on the (consistent) read. The key is the
    // tenant's own (itemKeys.runKey): two tenants' requests with the same key are two requests.
    const scope = new ExpressionScope();
    const item = {
      ...stringItem({ ...itemKeys.runKey(tenant, key), [ENTITY_ATTRIBUTE]: 'runKey', key, runId, requestHash }),
      createdAt: { S: ctx.now().toISOString() },
    };
    if (await conditionalPut(ctx, item, scope, scope.notExists(PARTITION_KEY))) return { runId, requestHash };
    const winner = await getItem(ctx, itemKeys.runKey(tenant, key));
    const owner = winner?.runId?.S;
    if (owner === undefined) {
      throw new ConflictError(`run key ${key} is claimed but unreadable`, { context: { key }, retryable: true });
    }
    // Claims written before request hashes were recorded have none.
    const ownerHash = winner?.requestHash?.S;
    return ownerHash === undefined ? { runId: owner } : { runId: owner, requestHash: ownerHash };
  };

  const updateRun = async (
    runId: string,
    from: readonly RunStatus[],
    patch: Partial<Omit<RunRecord, 'runId' | 'createdAt'>>,
    options: { readonly remove?: readonly RunRemovableField[]; readonly announce?: OutboxEntry } = {},
  ): Promise<RunRecord | undefined> => {
    if (from.length === 0) throw new ValidationError('updateRun needs at least one `from` status', []);
    const scope = new ExpressionScope();
    const update = new UpdateBuilder(scope);
    const fields = encodeFields(runCodecs, { ...patch, updatedAt: patch.updatedAt ?? ctx.now().toISOString() });
    for (const [name, value] of Object.entries(fields)) update.set(name, value);
    for (const name of options.remove ?? []) if (!(name in fields)) update.remove(name);
    const tenant = patch.tenant ?? DEFAULT_TENANT;
    if (patch.status !== undefined) {
      // The run moves in the listing by status, and is stamped to expire once it has ended (encodeRun's rules).
      const { GSI_STATUS_PK } = indexKeys.runByStatus(tenant, patch.status, '', runId);
      update.set(STATUS_PARTITION_KEY, { S: GSI_STATUS_PK });
      const { updatedAt } = fields;
      const ended = { status: patch.status, terminal: patch.terminal, updatedAt: updatedAt?.S ?? '' };
      const expiresAt = runExpiresAt(ended, ctx.retentionSeconds ?? DEFAULT_RETENTION_SECONDS);
      if (expiresAt === undefined) update.remove(TTL_ATTRIBUTE);
      else update.set(TTL_ATTRIBUTE, { N: String(expiresAt) });
    }
    // A status change moves the run's entry within its tenant's listing: the patch names the tenant (none: the
    // default tenant), and the condition holds it to the run's own, so an entry never lands in another's listing.
    const tenantHeld =
      patch.status === undefined && patch.tenant === undefined
        ? []
        : [tenant === DEFAULT_TENANT ? scope.notExists('tenant') : scope.equals('tenant', { S: tenant })];
    const condition = scope.and(
      scope.exists(PARTITION_KEY),
      scope.oneOf(
        'status',
        from.map((s) => ({ S: s })),
        'from',
      ),
      ...tenantHeld,
    );
    const item = await conditionalUpdate(ctx, itemKeys.run(runId), scope, update, condition, options.announce ?? null);
    const run = item === undefined ? undefined : decodeRun(item);
    ctx.layouts.learn(run);
    return run;
  };

  /**
   * Newest first: every shard of the runs listing (GSI1), or, for one status, of the listing by status (GSI_STATUS),
   * each read from the cursor's own sort key down (both indexes sort by createdAt#runId) and merged in order. So a
   * status listing reads the runs it shows, not the history around them.
   */
  const listRuns = async (
    options: { tenant?: string; status?: RunStatus; limit?: number; before?: RunPosition } = {},
  ): Promise<RunRecord[]> => {
    const limit = options.limit ?? DEFAULT_RUN_LIST_LIMIT;
    const { before, status } = options;
    const tenant = options.tenant ?? DEFAULT_TENANT;
    const [indexName, partitionKey, sortKey, partitions] =
      status === undefined
        ? [GSI1_NAME, GSI1_PARTITION_KEY, GSI1_SORT_KEY, indexKeys.runPartitions(tenant)]
        : [STATUS_INDEX_NAME, STATUS_PARTITION_KEY, STATUS_SORT_KEY, indexKeys.runStatusPartitions(tenant, status)];
    const inputs = partitions.map((partition) => {
      const scope = new ExpressionScope();
      const key = scope.equals(partitionKey, { S: partition }, 'runs');
      const range =
        before === undefined
          ? key
          : `${key} AND ${scope.lessThan(sortKey, { S: `${before.createdAt}#${before.runId}` }, 'before')}`;
      return { IndexName: indexName, KeyConditionExpression: range, ScanIndexForward: false, ...scope.parts() };
    });
    // Newest first across the shards: the same order as the sort key (createdAt, then runId), descending.
    return (await queryNewestAcross(ctx, inputs, sortKey, limit)).map(decodeRun);
  };

  const putPlanRevision = async (runId: string, plan: Plan, reason: string): Promise<void> => {
    const scope = new ExpressionScope();
    const record = { runId, revision: plan.revision, plan, reason, createdAt: ctx.now().toISOString() };
    const item = encodePlanRevision(record);
    if (!(await conditionalPut(ctx, item, scope, scope.notExists(PARTITION_KEY)))) {
      throw new ConflictError(`plan revision ${plan.revision} of run ${runId} already exists`, {
        context: { runId, revision: plan.revision },
      });
    }
    // Kept as decoded from the item written: the caller's own plan object stays the caller's.
    const { plan: stored, createdAt } = decodePlanRevision(item);
    remember(runId, plan.revision, { plan: stored, reason, createdAt });
  };

  const getPlanRevision = async (runId: string, revision?: number): Promise<StoredRevision | undefined> => {
    const cached = revision === undefined ? undefined : revisions.get(`${runId}#${revision}`);
    if (cached) return cached;
    const item =
      revision === undefined
        ? (await queryAll(ctx, { ...runItemsQuery(runId, SORT_PREFIX.plan), ScanIndexForward: false, Limit: 1 }, 1))[0]
        : await getItem(ctx, itemKeys.planRevision(runId, revision));
    if (item === undefined) return undefined;
    const { plan, reason, createdAt, revision: stored } = decodePlanRevision(item);
    return remember(runId, stored, { plan, reason, createdAt });
  };

  const listPlanRevisions = async (runId: string) => {
    const query = runItemsQuery(runId, SORT_PREFIX.plan);
    const names = { ...query.ExpressionAttributeNames };
    const projection = PLAN_SUMMARY_FIELDS.map((field) => {
      names[`#${field}`] = field;
      return `#${field}`;
    });
    const items = await queryAll(ctx, {
      ...query,
      ExpressionAttributeNames: names,
      ProjectionExpression: projection.join(', '),
    });
    return items.map(decodePlanSummary);
  };

  return {
    async createRun(run) {
      const scope = new ExpressionScope();
      if (!(await conditionalPut(ctx, encodeRun(run, ctx.retentionSeconds), scope, scope.notExists(PARTITION_KEY)))) {
        throw new ConflictError(`run ${run.runId} already exists`, { context: { runId: run.runId } });
      }
    },
    claimRunKey,
    async getRun(runId) {
      const item = await getItem(ctx, itemKeys.run(runId));
      const run = item === undefined ? undefined : decodeRun(item);
      ctx.layouts.learn(run);
      return run;
    },
    updateRun,
    listRuns,
    putPlanRevision,
    getPlanRevision,
    listPlanRevisions,
  };
}
