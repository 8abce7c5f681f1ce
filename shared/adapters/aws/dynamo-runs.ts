/**
 * Runs, run idempotency keys, plan revisions and the run's event log on DynamoDB.
 */
import { ConflictError, ValidationError } from '../../errors.ts';
import type { Plan, RunStatus } from '../../plan/schema.ts';
import type { NewRunEvent, RunEventRecord, RunRecord, Store } from '../../ports/store.ts';
import { encodeFields } from './dynamo-attributes.ts';
import {
  decodeEvent,
  decodePlanRevision,
  decodePlanSummary,
  decodeRun,
  ENTITY_ATTRIBUTE,
  encodeEvent,
  encodePlanRevision,
  encodeRun,
  PLAN_SUMMARY_FIELDS,
  runCodecs,
  stringItem,
} from './dynamo-codec.ts';
import { ExpressionScope, UpdateBuilder } from './dynamo-expressions.ts';
import {
  conditionalPut,
  conditionalUpdate,
  type DynamoContext,
  getItem,
  queryAll,
  runItemsQuery,
} from './dynamo-ops.ts';
import {
  EVENT_SEQ_DIGITS,
  formatEventSeq,
  GSI1_NAME,
  GSI1_PARTITION_KEY,
  itemKeys,
  PARTITION_KEY,
  RUNS_PARTITION,
  SORT_KEY,
  SORT_PREFIX,
} from './table-layout.ts';

export const DEFAULT_RUN_LIST_LIMIT = 100;

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
  | 'appendEvents'
  | 'listEvents'
>;

export function runOperations(ctx: DynamoContext): RunOperations {
  const claimRunKey = async (key: string, runId: string): Promise<string> => {
    // The key item is never deleted, so a lost put always finds the winner on the (consistent) read.
    const scope = new ExpressionScope();
    const item = {
      ...stringItem({ ...itemKeys.runKey(key), [ENTITY_ATTRIBUTE]: 'runKey', key, runId }),
      createdAt: { S: ctx.now().toISOString() },
    };
    if (await conditionalPut(ctx, item, scope, scope.notExists(PARTITION_KEY))) return runId;
    const winner = (await getItem(ctx, itemKeys.runKey(key)))?.runId?.S;
    if (winner === undefined) {
      throw new ConflictError(`run key ${key} is claimed but unreadable`, { context: { key }, retryable: true });
    }
    return winner;
  };

  const updateRun = async (
    runId: string,
    from: readonly RunStatus[],
    patch: Partial<Omit<RunRecord, 'runId' | 'createdAt'>>,
  ): Promise<RunRecord | undefined> => {
    if (from.length === 0) throw new ValidationError('updateRun needs at least one `from` status', []);
    const scope = new ExpressionScope();
    const update = new UpdateBuilder(scope);
    const fields = encodeFields(runCodecs, { ...patch, updatedAt: patch.updatedAt ?? ctx.now().toISOString() });
    for (const [name, value] of Object.entries(fields)) update.set(name, value);
    const condition = scope.and(
      scope.exists(PARTITION_KEY),
      scope.oneOf(
        'status',
        from.map((s) => ({ S: s })),
        'from',
      ),
    );
    const item = await conditionalUpdate(ctx, itemKeys.run(runId), scope, update, condition);
    return item === undefined ? undefined : decodeRun(item);
  };

  const listRuns = async (options: { status?: RunStatus; limit?: number } = {}): Promise<RunRecord[]> => {
    const limit = options.limit ?? DEFAULT_RUN_LIST_LIMIT;
    const scope = new ExpressionScope();
    const key = scope.equals(GSI1_PARTITION_KEY, { S: RUNS_PARTITION }, 'runs');
    const filter = options.status === undefined ? undefined : scope.equals('status', { S: options.status });
    const items = await queryAll(
      ctx,
      {
        IndexName: GSI1_NAME,
        KeyConditionExpression: key,
        ScanIndexForward: false,
        // With a filter, Limit would count items before filtering; let pages be full and stop at `limit`.
        ...(filter === undefined ? { Limit: limit } : { FilterExpression: filter }),
        ...scope.parts(),
      },
      limit,
    );
    return items.map(decodeRun);
  };

  const putPlanRevision = async (runId: string, plan: Plan, reason: string): Promise<void> => {
    const scope = new ExpressionScope();
    const record = { runId, revision: plan.revision, plan, reason, createdAt: ctx.now().toISOString() };
    if (!(await conditionalPut(ctx, encodePlanRevision(record), scope, scope.notExists(PARTITION_KEY)))) {
      throw new ConflictError(`plan revision ${plan.revision} of run ${runId} already exists`, {
        context: { runId, revision: plan.revision },
      });
    }
  };

  const getPlanRevision = async (runId: string, revision?: number) => {
    const item =
      revision === undefined
        ? (await queryAll(ctx, { ...runItemsQuery(runId, SORT_PREFIX.plan), ScanIndexForward: false, Limit: 1 }, 1))[0]
        : await getItem(ctx, itemKeys.planRevision(runId, revision));
    if (item === undefined) return undefined;
    const { plan, reason, createdAt } = decodePlanRevision(item);
    return { plan, reason, createdAt };
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

  /** Reserves `count` sequence numbers of a run with one atomic ADD; returns the first. */
  const reserveSeq = async (runId: string, count: number): Promise<number> => {
    const scope = new ExpressionScope();
    const update = new UpdateBuilder(scope).add('next', { N: String(count) }, 'count');
    const item = await conditionalUpdate(ctx, itemKeys.eventCounter(runId), scope, update, undefined);
    const last = Number(item?.next?.N);
    if (!Number.isSafeInteger(last)) throw new ConflictError(`event counter of run ${runId} is unreadable`);
    return last - count + 1;
  };

  const appendEvents = async (events: readonly NewRunEvent[]): Promise<RunEventRecord[]> => {
    const byRun = new Map<string, number[]>();
    for (const [i, event] of events.entries()) byRun.set(event.runId, [...(byRun.get(event.runId) ?? []), i]);
    const stored: RunEventRecord[] = [];
    for (const [runId, indexes] of byRun) {
      const first = await reserveSeq(runId, indexes.length);
      await Promise.all(
        indexes.map(async (index, offset) => {
          const record = { ...(events[index] as NewRunEvent), seq: formatEventSeq(first + offset) };
          const scope = new ExpressionScope();
          if (!(await conditionalPut(ctx, encodeEvent(record), scope, scope.notExists(PARTITION_KEY)))) {
            throw new ConflictError(`event ${record.seq} of run ${runId} already exists`, { context: { runId } });
          }
          stored[index] = record;
        }),
      );
    }
    return stored;
  };

  const listEvents = async (runId: string, options: { after?: string } = {}): Promise<RunEventRecord[]> => {
    if (options.after !== undefined && !/^\d{1,15}$/.test(options.after)) {
      throw new ValidationError(`event cursor must be a seq, got ${options.after}`, []);
    }
    if (options.after === undefined)
      return (await queryAll(ctx, runItemsQuery(runId, SORT_PREFIX.event))).map(decodeEvent);
    const scope = new ExpressionScope();
    const pk = scope.equals(PARTITION_KEY, { S: itemKeys.runPartition(runId) }, 'pk');
    const from = { S: `${SORT_PREFIX.event}${formatEventSeq(Number(options.after) + 1)}` };
    const to = { S: `${SORT_PREFIX.event}${'9'.repeat(EVENT_SEQ_DIGITS)}` };
    const range = `${scope.name(SORT_KEY)} BETWEEN ${scope.value('from', from)} AND ${scope.value('to', to)}`;
    const items = await queryAll(ctx, {
      KeyConditionExpression: `${pk} AND ${range}`,
      ConsistentRead: true,
      ...scope.parts(),
    });
    return items.map(decodeEvent);
  };

  return {
    async createRun(run) {
      const scope = new ExpressionScope();
      if (!(await conditionalPut(ctx, encodeRun(run), scope, scope.notExists(PARTITION_KEY)))) {
        throw new ConflictError(`run ${run.runId} already exists`, { context: { runId: run.runId } });
      }
    },
    claimRunKey,
    async getRun(runId) {
      const item = await getItem(ctx, itemKeys.run(runId));
      return item === undefined ? undefined : decodeRun(item);
    },
    updateRun,
    listRuns,
    putPlanRevision,
    getPlanRevision,
    listPlanRevisions,
    appendEvents,
    listEvents,
  };
}
