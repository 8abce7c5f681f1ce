/**
 * Step records and attempt evidence on DynamoDB. The two writes the scheduler's correctness rests on live here:
 * `transitionStep` (one conditional move per generation; only one claimant ever wins) and `releaseDependency`
 * (each edge counted exactly once, so the write that reaches zero is unique and starts the dependent).
 */
import { NotFoundError, ValidationError } from '../../errors.ts';
import type { StepStatus } from '../../plan/schema.ts';
import type { AttemptRecord, StepPatch, StepRecord, Store } from '../../ports/store.ts';
import { encodeFields } from './dynamo-attributes.ts';
import {
  decodeAttempt,
  decodeStep,
  encodeAttempt,
  encodeStep,
  encodeTraceEntries,
  stepCodecs,
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
import { attemptPrefix, itemKeys, PARTITION_KEY, SORT_PREFIX } from './table-layout.ts';

type StepOperations = Pick<
  Store,
  | 'putSteps'
  | 'getStep'
  | 'listSteps'
  | 'transitionStep'
  | 'releaseDependency'
  | 'putAttempt'
  | 'updateAttempt'
  | 'listAttempts'
>;

/** How many conditional puts `putSteps` keeps in flight (a 200-step plan should not open 200 sockets). */
const PUT_CONCURRENCY = 16;

/** The SET/REMOVE clauses of a step patch, encoded exactly as a put encodes the same fields. */
function applyStepPatch(update: UpdateBuilder, patch: StepPatch, updatedAt: string): void {
  const { appendTrace, trace, ...fields } = patch;
  for (const [name, value] of Object.entries(encodeFields(stepCodecs, { ...fields, updatedAt }))) {
    update.set(name, value);
  }
  if (trace !== undefined) {
    update.set('trace', encodeTraceEntries([...trace, ...(appendTrace ?? [])]));
  } else if (appendTrace !== undefined && appendTrace.length > 0) {
    update.appendToList('trace', encodeTraceEntries(appendTrace), 'appendTrace');
  }
}

export function stepOperations(ctx: DynamoContext): StepOperations {
  const putStep = async (step: StepRecord): Promise<void> => {
    const scope = new ExpressionScope();
    // A lost condition means the step exists already (a repeated startRun): leave it as it is.
    await conditionalPut(ctx, encodeStep(step), scope, scope.notExists(PARTITION_KEY));
  };

  const transitionStep = async (
    runId: string,
    stepId: string,
    condition: { generation: number; from: readonly StepStatus[]; unclaimed?: boolean },
    patch: StepPatch,
  ): Promise<StepRecord | undefined> => {
    if (condition.from.length === 0) throw new ValidationError('transitionStep needs at least one `from` status', []);
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
    const update = new UpdateBuilder(scope);
    applyStepPatch(update, patch, ctx.now().toISOString());
    const item = await conditionalUpdate(ctx, itemKeys.step(runId, stepId), scope, update, scope.and(...parts));
    return item === undefined ? undefined : decodeStep(item);
  };

  const releaseDependency = async (
    runId: string,
    stepId: string,
    generation: number,
    upstreamId: string,
  ): Promise<StepRecord | undefined> => {
    const scope = new ExpressionScope();
    const upstream = { S: upstreamId };
    // `contains(upstream, :u)` refuses an id that is not an edge of this step, so a stray release can never take
    // `remaining` to zero early; `released` is a string set, absent until the first release (sets cannot be empty).
    const condition = scope.and(
      scope.equals('generation', { N: String(generation) }),
      scope.contains('upstream', upstream, 'upstreamId'),
      scope.not(scope.contains('released', upstream, 'upstreamId')),
    );
    const update = new UpdateBuilder(scope)
      .set('updatedAt', { S: ctx.now().toISOString() })
      .add('remaining', { N: '-1' }, 'minusOne')
      .add('released', { SS: [upstreamId] }, 'upstreamSet');
    const item = await conditionalUpdate(ctx, itemKeys.step(runId, stepId), scope, update, condition);
    return item === undefined ? undefined : decodeStep(item);
  };

  return {
    async putSteps(steps) {
      for (let i = 0; i < steps.length; i += PUT_CONCURRENCY) {
        await Promise.all(steps.slice(i, i + PUT_CONCURRENCY).map(putStep));
      }
    },
    async getStep(runId, stepId) {
      const item = await getItem(ctx, itemKeys.step(runId, stepId));
      return item === undefined ? undefined : decodeStep(item);
    },
    async listSteps(runId) {
      return (await queryAll(ctx, runItemsQuery(runId, SORT_PREFIX.step))).map(decodeStep);
    },
    transitionStep,
    releaseDependency,
    async putAttempt(attempt) {
      const scope = new ExpressionScope();
      return conditionalPut(ctx, encodeAttempt(attempt), scope, scope.notExists(PARTITION_KEY));
    },
    async updateAttempt(attempt: AttemptRecord) {
      const scope = new ExpressionScope();
      if (!(await conditionalPut(ctx, encodeAttempt(attempt), scope, scope.exists(PARTITION_KEY)))) {
        const { runId, stepId, generation } = attempt;
        throw new NotFoundError(`attempt ${attempt.attempt} of step ${stepId} (generation ${generation}) not found`, {
          context: { runId, stepId, generation, attempt: attempt.attempt },
        });
      }
    },
    async listAttempts(runId, stepId) {
      return (await queryAll(ctx, runItemsQuery(runId, attemptPrefix(stepId)))).map(decodeAttempt);
    },
  };
}
