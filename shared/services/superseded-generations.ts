/**
 * What a step's generation that no longer counts leaves open, closed by whoever started the step's next generation
 * (an invalidation, a revision that restarts the step) or removed it (a revision without it): the execution that claimed it is stopped (its late result
 * fails the generation condition anyway), its attempt still recorded `running` (a gate waiting for a person) is
 * closed as superseded, and its pending approvals expire, so GET /approvals no longer offers them and a late decision
 * answers 410. One implementation for both movers, so that a gate superseded either way ends the same. The ended
 * generations also leave the run's frontier: a sink moved on is settled again only when its new generation ends.
 */
import { IN_FLIGHT_STEP_STATUSES } from '../engine/statuses.ts';
import type { StepError } from '../plan/schema.ts';
import { forEachInPool } from '../pool.ts';
import type { StepRecord } from '../ports/store.ts';
import type { Interpreter } from './interpreter.ts';
import { CANCELLED_ERROR, forgetEnded } from './run-end.ts';
import { closeRunningAttempt, expireApprovals } from './step-follow-ups.ts';

export const SUPERSEDED_CODE = 'E_SUPERSEDED';
/** Why an approval of a generation an invalidation superseded closed (an expired approval's comment). */
export const SUPERSEDED_APPROVAL_COMMENT = 'superseded: the step was invalidated';
/** Why an approval of a generation a plan revision superseded closed. */
export const REVISED_APPROVAL_COMMENT = 'superseded: a plan revision restarted the step';
/** Why an approval of a step a plan revision removed closed: nothing asks again. */
export const REMOVED_APPROVAL_COMMENT = 'superseded: a plan revision removed the step';
/** The comments of approvals closed because their step started a new generation (the new one asks again). */
export const SUPERSEDED_APPROVAL_COMMENTS: ReadonlySet<string> = new Set([
  SUPERSEDED_APPROVAL_COMMENT,
  REVISED_APPROVAL_COMMENT,
]);

/**
 * The generation a move ended, as the move found it: the step may have moved on since it was read (claimed, gone
 * to wait for a person), and the history entry the move wrote says how it really ended (status, execution).
 */
export function endedAs(read: StepRecord, after: StepRecord): StepRecord {
  const ended = after.history?.at(-1);
  if (ended?.generation !== read.generation) return read;
  const { claimedBy: _read, ...rest } = read;
  return { ...rest, status: ended.status, ...(ended.claimedBy === undefined ? {} : { claimedBy: ended.claimedBy }) };
}

export interface Superseding {
  /** The superseded generation's error (why its execution stops, how its attempt closes). */
  readonly errorOf: (ended: StepRecord) => StepError;
  /** The comment its pending approvals expire with. */
  readonly approvalComment: string;
}

/** How an invalidation closes the generations it ended: the next generation asks again. */
export const INVALIDATED: Superseding = {
  errorOf: (step) => ({
    code: SUPERSEDED_CODE,
    message: `step ${step.stepId} was invalidated: generation ${step.generation + 1} supersedes it`,
    retryable: false,
  }),
  approvalComment: SUPERSEDED_APPROVAL_COMMENT,
};

/** How they close in a cancelled run (an invalidation cut short by the cancel): nothing asks again. */
export const CLOSED_AS_CANCELLED: Superseding = {
  errorOf: () => CANCELLED_ERROR,
  approvalComment: CANCELLED_ERROR.message,
};

/**
 * Stops the executions of superseded generations that were in flight and closes their attempts and approvals: any
 * in-flight generation may have an approval (a gate, a review), written before or as its step moved to wait for it.
 * `ended` are the generations as they ended (see endedAs).
 */
export async function closeSuperseded(
  ctx: Interpreter,
  runId: string,
  ended: readonly StepRecord[],
  how: Superseding,
): Promise<void> {
  const inFlight = ended.filter((s) => IN_FLIGHT_STEP_STATUSES.includes(s.status));
  await forEachInPool(inFlight, async (step) => {
    if (!step.claimedBy) return;
    const error = how.errorOf(step);
    await closeRunningAttempt(ctx, step, { kind: 'invalidated', error });
    try {
      await ctx.deps.executions.stop(step.claimedBy, error.code, error.message);
    } catch (stopError) {
      // Finished on its own meanwhile: its result fails the generation condition, nothing to stop.
      console.error('cairn: stopping a superseded step execution failed', { runId, step, stopError });
    }
  });
  // Only up to the superseded generation: a later one's (a concurrent mover's, started already) still waits.
  const gates = new Map<string, number>();
  for (const s of inFlight) gates.set(s.stepId, Math.max(s.generation, gates.get(s.stepId) ?? 0));
  if (gates.size > 0) await expireApprovals(ctx, runId, gates, how.approvalComment);
  await forgetEnded(ctx, runId, ended);
}
