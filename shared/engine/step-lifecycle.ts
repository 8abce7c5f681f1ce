/**
 * A step's lifecycle within one generation, decided without I/O: the named transitions (each with the statuses it may
 * start from, whence every conditional write's condition), who may claim a step, and what an attempt's answer
 * means (succeed, go to a person, retry after a backoff, fail for good). The interpreter (shared/services/step)
 * loads the records, asks these functions, writes what they say and performs the effects.
 */
import type { StepError, StepStatus } from '../plan/schema.ts';
import type { AttemptRecord, StepRecord } from '../ports/store.ts';
import { decideRetry, type RetryPolicy } from './retry.ts';
import { CLOSED_IN_FLIGHT_STEP_STATUSES, canTransition, isTerminalStepStatus } from './statuses.ts';
import type { HumanDecision, Verdict } from './verify.ts';

/** A named move of a step record, and the only statuses it may be written from. */
export interface StepTransition {
  readonly to: StepStatus | null;
  readonly from: readonly StepStatus[];
  /** Only a step no execution has claimed yet (the claim and what a claim decides instead of running). */
  readonly unclaimed?: true;
}

const CLAIMABLE = ['pending', 'ready'] as const satisfies readonly StepStatus[];
const IN_FLIGHT = ['running', 'retrying', 'awaiting_approval'] as const satisfies readonly StepStatus[];

/**
 * Every transition a service writes. `to: null` changes fields without changing the status (a trace note on a step
 * in flight). Each `from → to` pair is checked against the status table at load (see below), so a transition the
 * table forbids cannot be written.
 */
export const STEP_TRANSITIONS = {
  /** pending → ready: the last upstream step finished (also done by the release write itself). */
  ready: { to: 'ready', from: ['pending'] },
  /** One execution takes the generation. */
  claim: { to: 'running', from: CLAIMABLE, unclaimed: true },
  /** `when` is false at the claim. */
  skip: { to: 'skipped', from: CLAIMABLE, unclaimed: true },
  /** The claim found the step cannot run (its `when` or input failed): failed before any attempt. */
  reject: { to: 'failed', from: CLAIMABLE, unclaimed: true },
  /** The run's budget is spent: the step is closed unstarted (the run ends `budget_exhausted`). */
  refuse: { to: 'cancelled', from: CLAIMABLE, unclaimed: true },
  /** A failed attempt with attempts left. */
  retry: { to: 'retrying', from: ['running', 'retrying'] },
  /** A person decides next (a gate, a review). */
  hold: { to: 'awaiting_approval', from: ['running', 'retrying'] },
  /** A verified result. */
  succeed: { to: 'succeeded', from: IN_FLIGHT },
  /**
   * A first attempt's verified result written with the attempt's record (see `attemptRecordPlace`): only while
   * attempt 1 is in flight, so a duplicated invocation that recorded the attempt apart and moved the step on (to a
   * retry, a review, a failure) keeps the step where that record put it.
   */
  succeedCarrying: { to: 'succeeded', from: ['running'] },
  /** A final failure of a claimed step. */
  fail: { to: 'failed', from: IN_FLIGHT },
  /** An upstream step failed before this one was claimed. */
  block: { to: 'blocked', from: CLAIMABLE },
  /** The run ended (cancel, deadline) with the step still open. */
  cancel: { to: 'cancelled', from: ['pending', 'ready', ...IN_FLIGHT] },
  /** A trace note on a step in flight. */
  note: { to: null, from: IN_FLIGHT },
  /**
   * An attempt that was under way when its step was cancelled: what it really did (its output, its failure, or that
   * it never started) is written onto the step as evidence; the step stays cancelled.
   */
  evidence: { to: null, from: ['cancelled'] },
  /** A finished mutating step's compensation starts (its segment failed, or the run is cancelled with compensation). */
  compensate: { to: 'compensating', from: ['succeeded'] },
  /** The compensation's capability answered well. */
  compensated: { to: 'compensated', from: ['compensating'] },
  /** The compensation failed for good: a person has to act. */
  compensationFailed: { to: 'compensation_failed', from: ['compensating'] },
  /** A person asks for the failed compensation to be tried again. */
  retryCompensation: { to: 'compensating', from: ['compensation_failed'] },
  /** A person undid the effect by hand and says so, with a note. */
  resolveCompensation: { to: 'compensated', from: ['compensation_failed'] },
} as const satisfies Readonly<Record<string, StepTransition>>;

export type StepTransitionName = keyof typeof STEP_TRANSITIONS;

for (const [name, transition] of Object.entries(STEP_TRANSITIONS) as [string, StepTransition][]) {
  for (const from of transition.from) {
    if (transition.to !== null && !canTransition(from, transition.to))
      throw new Error(`step transition ${name} (${from} → ${transition.to}) is not in the status table`);
  }
}

/** The condition of a conditional step write: this generation, one of the transition's source statuses. */
export function transitionCondition(
  name: StepTransitionName,
  generation: number,
): { generation: number; from: readonly StepStatus[]; unclaimed?: boolean } {
  const transition: StepTransition = STEP_TRANSITIONS[name];
  return { generation, from: transition.from, ...(transition.unclaimed ? { unclaimed: true } : {}) };
}

/** What a RunStep entry without a previous answer does with the step record it found. */
export type ClaimDecision =
  /** Nobody has it: evaluate `when` and the input, then claim (or skip, or reject). */
  | { readonly kind: 'claim' }
  /** This execution has it already (its task was retried): carry on from what the record says. */
  | { readonly kind: 'resume' }
  /** Another generation, another execution, a finished step or a finished run: nothing to do. */
  | { readonly kind: 'ignore' }
  /** The run's budget is spent: no new step starts (one already claimed carries on, see `resume`). */
  | { readonly kind: 'refuse'; readonly reason: string };

export function decideClaim(
  step: Pick<StepRecord, 'generation' | 'status' | 'claimedBy'> | undefined,
  generation: number,
  executionId: string,
  runLive: boolean,
  budgetExhausted?: string,
): ClaimDecision {
  if (step === undefined || step.generation !== generation) return { kind: 'ignore' };
  if (step.claimedBy !== undefined) return step.claimedBy === executionId ? { kind: 'resume' } : { kind: 'ignore' };
  if (!STEP_TRANSITIONS.claim.from.some((s) => s === step.status)) return { kind: 'ignore' };
  // A finished or cancelled run starts nothing new; its open steps are closed by whoever finished it.
  if (!runLive) return { kind: 'ignore' };
  return budgetExhausted === undefined ? { kind: 'claim' } : { kind: 'refuse', reason: budgetExhausted };
}

/**
 * Whether a failure RecordFailure is told of is the generation's failure before any attempt: its RunStep failed for
 * good (the claim write throttled past the Task's Retry, a crash while it loaded or prepared the step) and the step
 * is still unclaimed. The execution ends after RecordFailure and its deterministic name cannot be started again, so
 * nobody would ever claim the step: it fails as a claim that found it cannot run does (`reject`), or the run stays
 * open with a `ready` step and nothing left to move it.
 */
export function failsUnclaimed(
  step: Pick<StepRecord, 'generation' | 'status' | 'claimedBy'>,
  generation: number,
): boolean {
  return (
    step.generation === generation &&
    step.claimedBy === undefined &&
    STEP_TRANSITIONS.reject.from.some((s) => s === step.status)
  );
}

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

/** An attempt that may still be recorded `running` although its step generation ended, and how it ended. */
export interface LeftAttempt {
  readonly ref: { readonly generation: number; readonly attempt: number };
  readonly ending: AttemptEnding;
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
 * The attempts of a step that a run's end must make sure are closed: those of generations that ended while in
 * flight (closed with their run, superseded by a replan, or by a new generation while claimed). Their closer may have
 * failed to close a gate's running attempt (its write throttled, its answer lost), or looked at the generation before
 * it was claimed. A step that finished on its own is not among them: its attempts were recorded as they ended.
 */
export function attemptsToClose(
  step: Pick<StepRecord, 'stepId' | 'generation' | 'status' | 'claimedBy' | 'attempts' | 'error' | 'history'>,
): LeftAttempt[] {
  const left: LeftAttempt[] = [];
  for (const ended of step.history ?? []) {
    // A generation closed while claimed (a cancellation) ended as it was closed; one still in flight, by the next.
    if (ended.claimedBy !== undefined)
      left.push({
        ref: { generation: ended.generation, attempt: 1 },
        ending: isClosedInFlight(ended.status)
          ? closedEnding(step.stepId, ended)
          : SUPERSEDED_ENDING(step.stepId, ended.generation),
      });
  }
  if (isClosedInFlight(step.status) && step.claimedBy !== undefined) {
    left.push({
      ref: { generation: step.generation, attempt: Math.max(1, step.attempts) },
      ending: closedEnding(step.stepId, step),
    });
  }
  return left;
}

const isClosedInFlight = (status: StepStatus): boolean => CLOSED_IN_FLIGHT_STEP_STATUSES.includes(status);

/** How the attempt of a generation closed while claimed (`cancelled` or `superseded`) ends. */
function closedEnding(
  stepId: string,
  closed: { readonly generation: number; readonly status: StepStatus; readonly error?: StepError | null },
): AttemptEnding {
  return closed.status === 'superseded'
    ? { kind: 'invalidated', error: closed.error ?? supersededError(stepId, closed.generation) }
    : {
        kind: 'cancelled',
        error: closed.error ?? { code: 'E_CANCELLED', message: 'the step was cancelled', retryable: false },
      };
}

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
