/**
 * A step's next generation on DynamoDB (replanning, invalidation). An update expression cannot copy attributes
 * into a new list entry, so the ended generation is read first and written to `history` by an update conditioned on
 * the generation and on the version read (status and updatedAt): a concurrent write to the same generation (a late
 * completion, a release) makes the update retry with a fresh read; another generation means someone else won.
 */
import { CLOSED_IN_FLIGHT_STEP_STATUSES, IN_FLIGHT_STEP_STATUSES } from '../../engine/statuses.ts';
import { retainTrace } from '../../engine/trace.ts';
import { ConflictError } from '../../errors.ts';
import type { NextGeneration, StepGenerationRecord, StepRecord, Store } from '../../ports/store.ts';
import { encodeFields } from './dynamo-attributes.ts';
import {
  CARRIED_ATTEMPT_ATTRIBUTE,
  carriedAttempt,
  decodeStep,
  encodeAttempt,
  encodeStaleReleases,
  STALE_RELEASES_ATTRIBUTE,
  stepCodecs,
} from './dynamo-codec.ts';
import { ExpressionScope, UpdateBuilder } from './dynamo-expressions.ts';
import { conditionalPut, conditionalUpdate, type DynamoContext, getItem } from './dynamo-ops.ts';
import { itemKeys } from './table-layout.ts';

type GenerationOperations = Pick<Store, 'startGeneration'>;

/** An ended generation's output larger than this stays on its attempt records only (the step item has 400 KB). */
export const HISTORY_OUTPUT_LIMIT_BYTES = 16 * 1024;
/** Concurrent writes to the same generation in a row before giving up (each one means the step moved meanwhile). */
const MAX_TRIES = 8;

/** The ended generation as kept in `history`. */
export function generationRecord(step: StepRecord): StepGenerationRecord {
  const output =
    step.output !== undefined && Buffer.byteLength(JSON.stringify(step.output), 'utf8') <= HISTORY_OUTPUT_LIMIT_BYTES
      ? { output: step.output }
      : {};
  return {
    generation: step.generation,
    status: step.status,
    ...output,
    ...(step.error === undefined ? {} : { error: step.error }),
    ...(step.confidence === undefined ? {} : { confidence: step.confidence }),
    ...(step.startedAt === undefined ? {} : { startedAt: step.startedAt }),
    ...(step.finishedAt === undefined ? {} : { finishedAt: step.finishedAt }),
    // Claimed and ended by someone else (or not ended at all): its gate's attempt may still be recorded running.
    ...(step.claimedBy !== undefined &&
    (IN_FLIGHT_STEP_STATUSES.includes(step.status) || CLOSED_IN_FLIGHT_STEP_STATUSES.includes(step.status))
      ? { claimedBy: step.claimedBy }
      : {}),
  };
}

export function generationOperations(ctx: DynamoContext): GenerationOperations {
  return {
    async startGeneration(runId, stepId, fromGeneration, next: NextGeneration) {
      const key = itemKeys.step(runId, stepId);
      for (let tries = 0; tries < MAX_TRIES; tries++) {
        const item = await getItem(ctx, key);
        if (item === undefined) return undefined;
        const current = decodeStep(item);
        if (current.generation !== fromGeneration) return undefined;
        // The ended generation's attempt record rides on the step item: it gets an item of its own first (the same
        // content however often this is repeated, and it replaces a copy recorded apart: the carried one counted),
        // so the next generation can carry its own.
        const carried = carriedAttempt(item);
        if (carried) await conditionalPut(ctx, encodeAttempt(carried), new ExpressionScope(), undefined);
        const scope = new ExpressionScope();
        const update = new UpdateBuilder(scope);
        const fields = encodeFields(stepCodecs, {
          generation: fromGeneration + 1,
          status: next.status,
          upstream: next.upstream,
          remaining: next.remaining,
          released: next.released,
          attempts: 0,
          history: [...(current.history ?? []), generationRecord(current)],
          ...(next.key === undefined ? {} : { generationKey: next.key }),
          ...(next.appendTrace?.length
            ? { trace: retainTrace([...current.trace, ...next.appendTrace], next.status, 'full') }
            : {}),
          updatedAt: ctx.now().toISOString(),
        });
        for (const [name, value] of Object.entries(fields)) update.set(name, value);
        // An empty set is not stored (DynamoDB has none): no releases yet means no attribute.
        if (fields.released === undefined) update.remove('released');
        const stale = encodeStaleReleases(next.staleReleases);
        if (stale === undefined) update.remove(STALE_RELEASES_ATTRIBUTE);
        else update.set(STALE_RELEASES_ATTRIBUTE, stale);
        const cleared = ['claimedBy', 'output', 'error', 'confidence', 'startedAt', 'finishedAt', 'compensation'];
        if (fields.generationKey === undefined) cleared.push('generationKey');
        for (const name of [...cleared, CARRIED_ATTEMPT_ATTRIBUTE]) {
          update.remove(name);
        }
        const condition = scope.and(
          scope.equals('generation', { N: String(fromGeneration) }),
          scope.equals('status', { S: current.status }, 'readStatus'),
          scope.equals('updatedAt', { S: current.updatedAt }, 'readUpdatedAt'),
        );
        const written = await conditionalUpdate(ctx, key, scope, update, condition);
        if (written !== undefined) return decodeStep(written);
      }
      throw new ConflictError(`step ${stepId} of run ${runId} kept changing while its next generation was started`, {
        context: { runId, stepId, fromGeneration },
        retryable: true,
      });
    },
  };
}
