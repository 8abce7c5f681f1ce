/**
 * A failed attempt RunStep could not record itself: it crashed for good, or the wait for a person failed. The
 * coordinator's RecordFailure (the step machine's Catch) lands here; the engine decides, as for any failure, between a
 * retry and a final failure, so a failure recorded this way and one RunStep recorded itself end alike.
 */
import { isCompensationStepId } from '../../engine/compensation.ts';
import { isReplanWatchStepId } from '../../engine/replan/watch.ts';
import { retryPolicy } from '../../engine/retry.ts';
import { isTerminalStepStatus } from '../../engine/statuses.ts';
import {
  closeAttempt,
  decideAttemptOutcome,
  failsUnclaimed,
  transitionCondition,
} from '../../engine/step-lifecycle.ts';
import type { StepError } from '../../plan/schema.ts';
import { APPROVAL_EXPIRED_CODE } from '../coordinator-approval.ts';
import type { StepNext, StepRef } from '../coordinator-types.ts';
import { type Interpreter, isCurrent } from '../interpreter.ts';
import { afterFailure, afterSuccess, failStep } from '../step-follow-ups.ts';
import { recordCompensationFailure } from './compensation-step.ts';
import { done, follow, type InFlight } from './outcome.ts';
import { loadStepRecords, type RevisionMemory } from './step-records.ts';

/** The step's retry policy with the deployment's backoff. */
export const policyOf = (ctx: Interpreter, flight: InFlight) =>
  retryPolicy(flight.planStep, {
    baseSeconds: ctx.deps.config.retryBaseSeconds,
    capSeconds: ctx.deps.config.retryCapSeconds,
  });

/**
 * A failed attempt that RunStep could not record itself (it crashed for good, the wait for a person failed): the
 * attempt is marked failed and the engine decides, as for any failure, between a retry and a final failure.
 */
export async function recordFailedAttempt(
  ctx: Interpreter,
  ref: StepRef,
  attempt: number | undefined,
  error: StepError,
): Promise<StepNext> {
  if (isCompensationStepId(ref.stepId)) return recordCompensationFailure(ctx, ref, attempt, error);
  // A replan watch has no step record: its RunStep failing for good leaves the failure to the deadline.
  if (isReplanWatchStepId(ref.stepId)) return done(attempt ?? 1);
  const memory: RevisionMemory = new Map();
  const first = await loadStepRecords(ctx, memory, ref, attempt);
  const { step, planStep } = first;
  if (!isCurrent(step, ref.generation) || !planStep) return done(attempt ?? 0);
  if (step.status === 'failed') {
    // A repeat: the failure is written; make sure its follow-ups happened.
    await afterFailure(ctx, first.plan, step);
    return done(step.attempts);
  }
  if (failsUnclaimed(step, ref.generation)) {
    const note = `${error.code} before the step was claimed: ${error.message}`;
    const from = transitionCondition('reject', ref.generation).from;
    // Lost to a claim that landed late (a timed-out invocation's write): its attempt is the one that failed.
    const failed = await failStep(ctx, first.plan, step, error, { from, note });
    return failed ? done(0) : recordFailedAttempt(ctx, ref, attempt, error);
  }
  const n = attempt ?? Math.max(1, step.attempts);
  if (step.status === 'succeeded' || step.status === 'skipped') {
    // The step got there before this failure was recorded (a lost answer): make sure its follow-ups happened.
    await afterSuccess(ctx, first.plan, step);
    return done(step.attempts);
  }
  if (isTerminalStepStatus(step.status) || step.attempts > n) return done(n);
  const records = attempt === undefined ? await loadStepRecords(ctx, memory, ref, n) : first;
  const record = records.attempt;
  if (!record)
    await ctx.deps.store.putAttempt({
      ...ref,
      attempt: n,
      target: planStep.target ?? '',
      startedAt: ctx.now(),
      finishedAt: ctx.now(),
      outcome: 'failed',
      error,
      revision: records.run.revision,
      verdict: 'fail',
      evidence: {},
    });
  else if (record.outcome === 'running') {
    const kind = error.code === APPROVAL_EXPIRED_CODE ? 'expired' : 'failed';
    const closed = closeAttempt(record, { kind, error }, ctx.now());
    if (closed) await ctx.deps.store.updateAttempt(closed);
  } else if (record.outcome !== 'failed')
    await ctx.deps.store.updateAttempt({ ...record, outcome: 'failed', finishedAt: ctx.now(), error, verdict: 'fail' });
  const flight: InFlight = { records, step, planStep };
  const outcome = decideAttemptOutcome(n, { error }, policyOf(ctx, flight));
  return follow(ctx, flight, {
    attempt: n,
    outcome,
    note: `attempt ${n} failed: ${error.code} ${error.message}`,
    result: { output: null, confidence: null },
  });
}
