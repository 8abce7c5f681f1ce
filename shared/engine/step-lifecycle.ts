/**
 * An attempt of a step, decided without I/O: what its answer means (succeed, go to a person, retry after a backoff,
 * fail for good), where its record is written, and how a gate's attempt recorded `running` is closed. The run's
 * decider (engine/run) and a step execution (shared/services/step) ask the same functions.
 */
import type { StepError } from '../plan/schema.ts';
import type { AttemptRecord, StepRecord } from '../ports/store.ts';
import { decideRetry, type RetryPolicy } from './retry.ts';
import { isTerminalStepStatus } from './statuses.ts';
import type { HumanDecision, Verdict } from './verify.ts';

/** What follows an attempt: the verdict on its result, or its failure, against the step's retry policy. */
export type AttemptOutcome =
  | { readonly kind: 'succeed' }
  | { readonly kind: 'review'; readonly reason: string }
  | { readonly kind: 'retry'; readonly attempt: number; readonly delaySeconds: number; readonly error: StepError }
  | { readonly kind: 'fail'; readonly error: StepError; readonly why: 'permanent' | 'exhausted' };

export function decideAttemptOutcome(
  attempt: number,
  result: { readonly verdict: Verdict } | { readonly error: StepError },
  policy: RetryPolicy,
): AttemptOutcome {
  if ('verdict' in result) {
    const { verdict } = result;
    if (verdict.verdict === 'pass') return { kind: 'succeed' };
    if (verdict.verdict === 'review') return { kind: 'review', reason: verdict.reason };
    return failure(attempt, verdict.error, policy);
  }
  return failure(attempt, result.error, policy);
}

function failure(attempt: number, error: StepError, policy: RetryPolicy): AttemptOutcome {
  const decision = decideRetry(attempt, error, policy);
  return decision.decision === 'retry'
    ? { kind: 'retry', attempt: decision.attempt, delaySeconds: decision.delaySeconds, error }
    : { kind: 'fail', error, why: decision.reason };
}

/**
 * An attempt record of up to this many characters of JSON may ride on its step's item. Every dependent's load and
 * every listing reads the step item, so a larger one (kept out of line by the store) would be fetched each time.
 */
export const CARRIED_ATTEMPT_MAX_CHARS = 16 * 1024;

/**
 * Where a freshly made attempt's record is written: `with-success`, by the step's success write itself (one write
 * fewer per step), when the attempt is the first one, it succeeds, it spent nothing that must be counted before the
 * step's outcome is decided (model usage under budgets) and it is small; otherwise `apart`, an item of its own
 * written before the step moves (a retry reads attempt 1's input back, a review holds its result, a failure keeps
 * its evidence). Either way a RunStep repeated after the record exists does not call the capability again.
 */
export function attemptRecordPlace(attempt: {
  readonly number: number;
  readonly outcome: AttemptOutcome;
  readonly spends: boolean;
  readonly chars: number;
}): 'with-success' | 'apart' {
  const carries =
    attempt.number === 1 &&
    attempt.outcome.kind === 'succeed' &&
    !attempt.spends &&
    attempt.chars <= CARRIED_ATTEMPT_MAX_CHARS;
  return carries ? 'with-success' : 'apart';
}

/**
 * How an attempt recorded as `running` ended (only a gate's is recorded before it ends: its record holds the input
 * the approver sees): a person's decision, the wait expiring, the run ending, or a new generation superseding it.
 */
export type AttemptEnding =
  | {
      readonly kind: 'decided';
      readonly decision: HumanDecision;
      readonly verdict: 'pass' | 'fail';
      readonly error?: StepError;
      /** What a passing decision leaves as the attempt's output (an approval, an edit). */
      readonly output?: unknown;
    }
  /** `failed`: the wait or the invocation failed for good (RecordFailure) for another reason than the expiry. */
  | { readonly kind: 'expired' | 'failed' | 'cancelled' | 'invalidated'; readonly error: StepError };

/**
 * The closed record of an attempt that was still `running`, or undefined when there is nothing to close (it ended
 * already: the first ending written stays). Every path that ends a gate's attempt asks here, so none leaves it open.
 */
export function closeAttempt(record: AttemptRecord, ending: AttemptEnding, at: string): AttemptRecord | undefined {
  if (record.outcome !== 'running') return undefined;
  if (ending.kind === 'decided') {
    const { decision, verdict } = ending;
    const said = { decision: decision.decision, decidedBy: decision.by ?? null, comment: decision.comment ?? null };
    return {
      ...record,
      outcome: verdict === 'pass' ? 'succeeded' : 'failed',
      finishedAt: at,
      verdict,
      ...(verdict === 'fail' ? { error: ending.error ?? null } : {}),
      ...(verdict === 'pass' && 'output' in ending ? { output: ending.output } : {}),
      evidence: { ...record.evidence, ...said, verdict },
    };
  }
  return {
    ...record,
    outcome: 'failed',
    finishedAt: at,
    verdict: 'fail',
    error: ending.error,
    evidence: { ...record.evidence, ending: ending.kind },
  };
}

const supersededError = (stepId: string, generation: number): StepError => ({
  code: 'E_SUPERSEDED',
  message: `step ${stepId} was invalidated: generation ${generation + 1} supersedes it`,
  retryable: false,
});

const SUPERSEDED_ENDING = (stepId: string, generation: number): AttemptEnding => ({
  kind: 'invalidated',
  error: supersededError(stepId, generation),
});

/**
 * How to close a gate's attempt that its own execution has just recorded `running`, when the step no longer waits in
 * that generation (closed with its run, superseded): whoever closed the step may have looked for the attempt before
 * it landed. Undefined while the step is still this generation's and in flight.
 */
export function orphanedAttemptEnding(
  step: Pick<StepRecord, 'stepId' | 'generation' | 'status' | 'error'> | undefined,
  record: Pick<AttemptRecord, 'stepId' | 'generation' | 'outcome'>,
): AttemptEnding | undefined {
  if (record.outcome !== 'running') return undefined;
  if (step === undefined || step.generation !== record.generation)
    return SUPERSEDED_ENDING(record.stepId, record.generation);
  if (!isTerminalStepStatus(step.status) || step.status === 'succeeded') return undefined;
  const error = step.error ?? { code: 'E_CANCELLED', message: `the step ended ${step.status}`, retryable: false };
  return {
    kind: step.status === 'superseded' ? 'invalidated' : step.status === 'cancelled' ? 'cancelled' : 'failed',
    error,
  };
}
