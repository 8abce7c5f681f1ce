/**
 * A failed attempt RunStep could not report itself: it crashed for good (the platform's errors outlasted its
 * retries), or the wait for a person failed. The step machine's RecordFailure lands here: the attempt's record says
 * it failed, the run's decider is told (ExecutionFailed), and the machine is routed by the same retry rule the
 * decider applies (a retry after the backoff, or the end).
 */
import { isCompensationStepId } from '../../engine/compensation.ts';
import { retryPolicy } from '../../engine/retry.ts';
import type { StepBrief } from '../../engine/run/step-brief.ts';
import { IN_FLIGHT_STEP_STATUSES } from '../../engine/statuses.ts';
import { closeAttempt, decideAttemptOutcome } from '../../engine/step-lifecycle.ts';
import type { StepError } from '../../plan/schema.ts';
import type { StepNext, StepRef } from '../coordinator-types.ts';
import type { Interpreter } from '../interpreter.ts';
import { recordCompensationFailure } from './compensation-step.ts';
import { done, type InFlight } from './report.ts';
import { loadStepRecords, type RevisionMemory } from './step-records.ts';

export const APPROVAL_EXPIRED_CODE = 'E_APPROVAL_EXPIRED';

/** The step's retry policy with the deployment's backoff. */
export const policyOf = (ctx: Interpreter, flight: Pick<InFlight, 'planStep'>) =>
  retryPolicy(flight.planStep, {
    baseSeconds: ctx.deps.config.retryBaseSeconds,
    capSeconds: ctx.deps.config.retryCapSeconds,
  });

export async function recordFailedAttempt(
  ctx: Interpreter,
  ref: StepRef & { readonly executionId?: string },
  attempt: number | undefined,
  error: StepError,
  previous?: { readonly attempt: number } | null,
  brief?: StepBrief | null,
): Promise<StepNext> {
  if (isCompensationStepId(ref.stepId)) return recordCompensationFailure(ctx, ref, attempt, error);
  const memory: RevisionMemory = new Map();
  const first = await loadStepRecords(ctx, memory, ref, attempt, brief);
  const { step, planStep } = first;
  if (step?.generation !== ref.generation || !planStep || !IN_FLIGHT_STEP_STATUSES.includes(step.status))
    return done(attempt ?? 0);
  // The attempt under way, as RunStep's entry names it (its first entry: attempt 1): the same for a repeat of this
  // call, whatever the decider made of the first. Without it (an execution from before), the step's count says: after
  // a retry's backoff the step still says `retrying` with the attempt that failed.
  const n =
    attempt ??
    (previous === undefined
      ? step.status === 'retrying'
        ? step.attempts + 1
        : Math.max(1, step.attempts)
      : Math.max(1, previous?.attempt ?? 1));
  const records = attempt === n ? first : await loadStepRecords(ctx, memory, ref, n, brief);
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
  }
  await ctx.deps.mailbox.send(ref.runId, {
    kind: 'ExecutionFailed',
    stepId: ref.stepId,
    generation: ref.generation,
    attempt: n,
    error,
  });
  // A failed wait is the decider's to settle (it honours a decision already taken): the execution ends.
  if (step.status === 'awaiting_approval') return done(n);
  const outcome = decideAttemptOutcome(n, { error }, policyOf(ctx, { planStep }));
  return outcome.kind === 'retry'
    ? { action: 'retry', attempt: outcome.attempt, delaySeconds: outcome.delaySeconds }
    : done(n);
}
