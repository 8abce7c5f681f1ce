/**
 * Step records and attempt evidence on DynamoDB: what a step execution reads, and the conditional step write it
 * makes itself (`transitionStep`: a first attempt's success carrying its attempt record, a trace note). The run's
 * decider writes its steps through the run log (dynamo-run-log.ts).
 */
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { OutboxEntry } from '../../events/outbox.ts';
import type { StepStatus } from '../../plan/schema.ts';
import type { AttemptRecord, AttemptRef, StepPatch, StepRecord, StepWithRun, Store } from '../../ports/store.ts';
import { encodeFields, type Item } from './dynamo-attributes.ts';
import {
  CARRIED_ATTEMPT_ATTRIBUTE,
  carriedAttempt,
  decodeAttempt,
  decodeRun,
  decodeStep,
  encodeAttempt,
  encodeCarriedAttempt,
  encodeStep,
  encodeTraceEntries,
  stepCodecs,
} from './dynamo-codec.ts';
import { ExpressionScope, UpdateBuilder } from './dynamo-expressions.ts';
import {
  batchGetItems,
  conditionalPut,
  conditionalUpdate,
  type DynamoContext,
  getItem,
  itemWithKey,
  partitionItemsQuery,
  queryAll,
} from './dynamo-ops.ts';
import { queryStepPartitions, stepShardsOf } from './dynamo-step-keys.ts';
import { attemptPrefix, type ItemKey, itemKeys, PARTITION_KEY, SORT_PREFIX } from './table-layout.ts';

type StepOperations = Pick<
  Store,
  | 'putSteps'
  | 'getStep'
  | 'listSteps'
  | 'listStepStatuses'
  | 'getSteps'
  | 'getStepWithRun'
  | 'transitionStep'
  | 'getAttempt'
  | 'putAttempt'
  | 'updateAttempt'
  | 'listAttempts'
>;

/** How many conditional puts `putSteps` keeps in flight (a 200-step plan should not open 200 sockets). */
const PUT_CONCURRENCY = 16;

/** The SET/REMOVE clauses of a step patch, encoded exactly as a put encodes the same fields. */
function applyStepPatch(update: UpdateBuilder, patch: StepPatch, updatedAt: string): void {
  const { appendTrace, trace, attemptRecord, ...fields } = patch;
  for (const [name, value] of Object.entries(encodeFields(stepCodecs, { ...fields, updatedAt }))) {
    update.set(name, value);
  }
  if (attemptRecord !== undefined)
    update.set(
      CARRIED_ATTEMPT_ATTRIBUTE,
      encodeCarriedAttempt(attemptRecord, { output: fields.output, confidence: fields.confidence }),
    );
  if (trace !== undefined) {
    update.set('trace', encodeTraceEntries([...trace, ...(appendTrace ?? [])]));
  } else if (appendTrace !== undefined && appendTrace.length > 0) {
    update.appendToList('trace', encodeTraceEntries(appendTrace), 'appendTrace');
  }
}

const attemptSortKey = (a: AttemptRecord): string => itemKeys.attempt(a.runId, a.stepId, a.generation, a.attempt).SK;

/** Attempt `ref` of a step: the one its step item carries, else its own item among `items`. */
function attemptOf(
  step: Item | undefined,
  items: readonly Item[],
  runId: string,
  stepId: string,
  ref: AttemptRef,
  shards: number,
): AttemptRecord | undefined {
  const carried = carriedAttempt(step);
  if (carried?.generation === ref.generation && carried.attempt === ref.attempt) return carried;
  const key: ItemKey = itemKeys.attempt(runId, stepId, ref.generation, ref.attempt, shards);
  const own = itemWithKey(items, key);
  return own === undefined ? undefined : decodeAttempt(own);
}

/** Attempts recorded apart plus those the step items carry (a carried one replaces its copy), in key order. */
function withCarried(own: readonly AttemptRecord[], steps: readonly Item[]): AttemptRecord[] {
  const byKey = new Map(own.map((a) => [attemptSortKey(a), a]));
  for (const step of steps) {
    const carried = carriedAttempt(step);
    if (carried) byKey.set(attemptSortKey(carried), carried);
  }
  return [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, attempt]) => attempt);
}

export function stepOperations(ctx: DynamoContext): StepOperations {
  const putStep = async (step: StepRecord, shards: number): Promise<void> => {
    const scope = new ExpressionScope();
    // A lost condition means the step exists already (a repeated startRun): leave it as it is.
    await conditionalPut(ctx, encodeStep(step, shards), scope, scope.notExists(PARTITION_KEY));
  };

  const transitionStep = async (
    runId: string,
    stepId: string,
    condition: { generation: number; from: readonly StepStatus[]; unclaimed?: boolean },
    patch: StepPatch,
    announce?: OutboxEntry,
  ): Promise<StepRecord | undefined> => {
    if (condition.from.length === 0) throw new ValidationError('transitionStep needs at least one `from` status', []);
    const carried = patch.attemptRecord;
    if (
      carried &&
      (carried.runId !== runId || carried.stepId !== stepId || carried.generation !== condition.generation)
    )
      throw new ValidationError('a step transition carries only an attempt of that step and generation', []);
    const scope = new ExpressionScope();
    const parts = [
      scope.equals('generation', { N: String(condition.generation) }),
      scope.oneOf(
        'status',
        condition.from.map((s) => ({ S: s })),
        'from',
      ),
    ];
    if (condition.unclaimed === true) parts.push(scope.notExists('claimedBy'));
    // A step carries one attempt record per generation.
    if (patch.attemptRecord !== undefined) parts.push(scope.notExists(CARRIED_ATTEMPT_ATTRIBUTE));
    const update = new UpdateBuilder(scope);
    applyStepPatch(update, patch, ctx.now().toISOString());
    const item = await conditionalUpdate(
      ctx,
      itemKeys.step(runId, stepId, await stepShardsOf(ctx, runId)),
      scope,
      update,
      scope.and(...parts),
      announce ?? null,
    );
    return item === undefined ? undefined : decodeStep(item);
  };

  const getSteps = async (runId: string, stepIds: readonly string[]): Promise<StepRecord[]> => {
    if (stepIds.length === 0) return [];
    const shards = await stepShardsOf(ctx, runId);
    return (
      await batchGetItems(
        ctx,
        stepIds.map((stepId) => itemKeys.step(runId, stepId, shards)),
      )
    ).map(decodeStep);
  };

  /** The step's keys (and the run's, and the others') as a run of `shards` step partitions has them. */
  const stepWithRunKeys = (
    runId: string,
    stepId: string,
    shards: number,
    attempt?: AttemptRef,
    others?: readonly string[],
  ) => ({
    run: itemKeys.run(runId),
    step: itemKeys.step(runId, stepId, shards),
    attempt: attempt && itemKeys.attempt(runId, stepId, attempt.generation, attempt.attempt, shards),
    others: (others ?? []).filter((id) => id !== stepId).map((id) => itemKeys.step(runId, id, shards)),
  });

  const getStepWithRun = async (
    runId: string,
    stepId: string,
    attempt?: AttemptRef,
    others?: readonly string[],
  ): Promise<StepWithRun> => {
    // One round trip where this process knows the run's step partitions, or guesses right (its own partition: a run
    // of up to 256 steps); the run item read along says which it is, and a wrong guess reads the step items again.
    const guess = ctx.layouts.known(runId) ?? 1;
    let keys = stepWithRunKeys(runId, stepId, guess, attempt, others);
    let items = await batchGetItems(ctx, [
      keys.run,
      keys.step,
      ...(keys.attempt ? [keys.attempt] : []),
      ...keys.others,
    ]);
    const runItem = itemWithKey(items, keys.run);
    const runRecord = runItem === undefined ? undefined : decodeRun(runItem);
    ctx.layouts.learn(runRecord);
    const shards = runRecord?.stepShards ?? 1;
    if (shards !== guess) {
      keys = stepWithRunKeys(runId, stepId, shards, attempt, others);
      items = await batchGetItems(ctx, [keys.step, ...(keys.attempt ? [keys.attempt] : []), ...keys.others]);
    }
    const otherKeys = keys.others;
    const step = itemWithKey(items, keys.step);
    const found = attempt && attemptOf(step, items, runId, stepId, attempt, shards);
    const otherSteps =
      others === undefined
        ? undefined
        : otherKeys.flatMap((key) => {
            const item = itemWithKey(items, key);
            return item === undefined ? [] : [item];
          });
    return {
      ...(runRecord ? { run: runRecord } : {}),
      ...(step ? { step: decodeStep(step) } : {}),
      ...(found ? { attempt: found } : {}),
      ...(otherSteps === undefined ? {} : { others: otherSteps.map(decodeStep) }),
    };
  };

  return {
    async putSteps(steps) {
      // A pool, not rounds of PUT_CONCURRENCY: a round waits for its slowest put before the next one starts, which
      // on a 200-step plan is 13 slowest-of-16 round trips on the way to the run's first step.
      // After a failure no new put starts (the caller is told at once; a repeat writes what is missing).
      const runs = [...new Set(steps.map((step) => step.runId))];
      const shardsOf = new Map(
        await Promise.all(runs.map(async (runId) => [runId, await stepShardsOf(ctx, runId)] as const)),
      );
      let next = 0;
      let failed = false;
      const worker = async (): Promise<void> => {
        while (next < steps.length && !failed) {
          const step = steps[next] as StepRecord;
          next += 1;
          try {
            await putStep(step, shardsOf.get(step.runId) ?? 1);
          } catch (error) {
            failed = true;
            throw error;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(PUT_CONCURRENCY, steps.length) }, worker));
    },
    async getStep(runId, stepId) {
      const item = await getItem(ctx, itemKeys.step(runId, stepId, await stepShardsOf(ctx, runId)));
      return item === undefined ? undefined : decodeStep(item);
    },
    async listSteps(runId) {
      const shards = await stepShardsOf(ctx, runId);
      return (await queryStepPartitions(ctx, runId, shards, SORT_PREFIX.step)).map(decodeStep);
    },
    async listStepStatuses(runId) {
      const shards = await stepShardsOf(ctx, runId);
      // Two short attributes of each item: no large value of a step is read back, decoded or filled in.
      const items = await queryStepPartitions(ctx, runId, shards, SORT_PREFIX.step, ['stepId', 'status']);
      return items.map((item) => ({
        stepId: item.stepId?.S ?? '',
        status: (item.status?.S ?? 'pending') as StepStatus,
      }));
    },
    getSteps,
    getStepWithRun,
    transitionStep,
    async getAttempt(runId, stepId, ref) {
      // The attempt may be carried by its step's item: both in one round trip.
      const shards = await stepShardsOf(ctx, runId);
      const stepKey = itemKeys.step(runId, stepId, shards);
      const items = await batchGetItems(ctx, [
        itemKeys.attempt(runId, stepId, ref.generation, ref.attempt, shards),
        stepKey,
      ]);
      return attemptOf(itemWithKey(items, stepKey), items, runId, stepId, ref, shards);
    },
    async putAttempt(attempt) {
      const scope = new ExpressionScope();
      const shards = await stepShardsOf(ctx, attempt.runId);
      return conditionalPut(ctx, encodeAttempt(attempt, shards), scope, scope.notExists(PARTITION_KEY));
    },
    async updateAttempt(attempt: AttemptRecord) {
      const scope = new ExpressionScope();
      const shards = await stepShardsOf(ctx, attempt.runId);
      if (!(await conditionalPut(ctx, encodeAttempt(attempt, shards), scope, scope.exists(PARTITION_KEY)))) {
        const { runId, stepId, generation } = attempt;
        throw new NotFoundError(`attempt ${attempt.attempt} of step ${stepId} (generation ${generation}) not found`, {
          context: { runId, stepId, generation, attempt: attempt.attempt },
        });
      }
    },
    async listAttempts(runId, stepId) {
      const shards = await stepShardsOf(ctx, runId);
      const [own, steps] = await Promise.all([
        stepId === undefined
          ? queryStepPartitions(ctx, runId, shards, attemptPrefix())
          : queryAll(ctx, partitionItemsQuery(itemKeys.step(runId, stepId, shards).PK, attemptPrefix(stepId))),
        stepId === undefined
          ? queryStepPartitions(ctx, runId, shards, SORT_PREFIX.step)
          : getItem(ctx, itemKeys.step(runId, stepId, shards)).then((item) => (item === undefined ? [] : [item])),
      ]);
      return withCarried(own.map(decodeAttempt), steps);
    },
  };
}
