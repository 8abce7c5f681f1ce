/**
 * The terminal-state decision of a run. Precedence: cancellation > verified completion > denied approval >
 * deadline > retry/budget exhaustion > continue. A failure does not stop independent branches: while work is open
 * (and neither the deadline nor the budget has run out) the run continues, and the failure decides the state once
 * everything has settled. Completion is never vacuous: every expected step must be succeeded or skipped and at
 * least one must have succeeded (a failure accepted by `onFailure: continue` counts as settled, not as succeeded).
 */
import { boundJson, clipMessage } from '../plan/bounded-text.ts';
import type { FailurePolicy, StepError, StepStatus } from '../plan/schema.ts';
import { OPEN_STEP_STATUSES } from './statuses.ts';
import { VERIFY_ERROR_CODES } from './verify.ts';

export interface TerminalStepView {
  readonly status: StepStatus;
  readonly error?: StepError | null | undefined;
}

export interface TerminalInput {
  readonly cancelled?: boolean | undefined;
  /** The executable step ids of the current plan revision: what has to finish for the run to be complete. */
  readonly expected: readonly string[];
  readonly steps: ReadonlyMap<string, TerminalStepView>;
  /** The run deadline has passed. */
  readonly timedOut?: boolean | undefined;
  /** A budget (cost, replans) ran out, with the reason. */
  readonly budgetExhausted?: string | undefined;
  /** Something outside the steps ended the run early (the run machine's wait failed), with the reason. */
  readonly aborted?: string | undefined;
  /**
   * The steps' `onFailure` policies (absent: `retry-then-fail`). A failure under `continue` is accepted (it does not
   * keep the run from completing, and the evidence lists it); one under `fail-run` fails the run at once.
   */
  readonly policies?: ReadonlyMap<string, FailurePolicy | undefined> | undefined;
}

export type TerminalReason =
  | 'cancelled'
  | 'completed'
  | 'approval_denied'
  | 'deadline'
  | 'budget_exhausted'
  | 'aborted'
  | 'step_failed'
  | 'nothing_succeeded'
  | 'incomplete';

export interface TerminalEvidence {
  /** Failed steps (not blocked ones): what made the run fail. */
  readonly rootCauses: string[];
  readonly errors: Record<string, StepError>;
  readonly counts: Partial<Record<StepStatus | 'unknown', number>>;
  /** Expected steps without a record. */
  readonly unknown: string[];
  /** Steps still open when the decision was taken (a deadline, a budget). */
  readonly open: string[];
  readonly awaitingApproval: string[];
  /** Failed steps whose `onFailure: continue` accepted the failure (not root causes). */
  readonly continued?: string[];
  readonly detail?: string;
}

export type TerminalDecision =
  | { readonly state: 'continue' }
  | {
      readonly state: 'complete' | 'failed' | 'paused' | 'cancelled';
      readonly reason: TerminalReason;
      readonly evidence: TerminalEvidence;
    };

/** Characters of JSON an error's `details` keeps in the evidence (the step's own record keeps them whole). */
const EVIDENCE_DETAILS_CHARS = 1000;

/**
 * A failed step's error as the run's evidence names it, bounded: the evidence is on the run record, read by every
 * step action and shown in every run listing, and it names each failed step of the plan at once.
 */
function evidenceError(error: StepError): StepError {
  const bounded: StepError = { code: clipMessage(error.code, 200), message: clipMessage(error.message) };
  if (error.retryable !== undefined) bounded.retryable = error.retryable;
  if (error.details !== undefined)
    bounded.details = boundJson(error.details, EVIDENCE_DETAILS_CHARS).value as StepError['details'];
  return bounded;
}

// Pending steps wait for someone upstream, so they count as moving only through what they wait for.
const STILL_WORKING: ReadonlySet<StepStatus> = new Set(['ready', 'running', 'retrying']);

function collect(input: TerminalInput) {
  const rootCauses: string[] = [];
  const errors: Record<string, StepError> = {};
  const counts: Partial<Record<StepStatus | 'unknown', number>> = {};
  const unknown: string[] = [];
  const open: string[] = [];
  const awaitingApproval: string[] = [];
  const continued: string[] = [];
  let failRun = false;
  let succeeded = 0;
  let settledWell = 0; // succeeded or skipped
  let expected = 0;
  let working = 0;
  let denied = false;
  for (const id of new Set(input.expected)) {
    const step = input.steps.get(id);
    if (step?.status === 'superseded') continue; // replaced by a later revision: not part of this plan
    expected += 1;
    const status = step?.status ?? 'unknown';
    counts[status] = (counts[status] ?? 0) + 1;
    if (step === undefined) {
      unknown.push(id);
      continue;
    }
    if (step.status === 'succeeded') succeeded += 1;
    if (step.status === 'succeeded' || step.status === 'skipped') settledWell += 1;
    if (OPEN_STEP_STATUSES.has(step.status)) open.push(id);
    if (STILL_WORKING.has(step.status)) working += 1;
    if (step.status === 'awaiting_approval') awaitingApproval.push(id);
    if (step.status === 'failed' && input.policies?.get(id) === 'continue') {
      continued.push(id);
      settledWell += 1;
      if (step.error) errors[id] = evidenceError(step.error);
      continue;
    }
    if (step.status === 'failed') {
      if (input.policies?.get(id) === 'fail-run') failRun = true;
      rootCauses.push(id);
      if (step.error) errors[id] = evidenceError(step.error);
      if (step.error?.code === VERIFY_ERROR_CODES.rejected) denied = true;
    }
  }
  const evidence: TerminalEvidence = {
    rootCauses,
    errors,
    counts,
    unknown,
    open,
    awaitingApproval,
    ...(continued.length === 0 ? {} : { continued }),
  };
  const complete = expected > 0 && settledWell === expected && succeeded > 0;
  return { evidence, complete, denied, failRun, working, allSettledWell: settledWell === expected };
}

/** The state a run should be in now, given its steps; 'continue' while it is neither finished nor out of time. */
export function decideTerminal(input: TerminalInput): TerminalDecision {
  const { evidence, complete, denied, failRun, working, allSettledWell } = collect(input);
  if (input.cancelled) return { state: 'cancelled', reason: 'cancelled', evidence };
  if (complete) return { state: 'complete', reason: 'completed', evidence };
  // `onFailure: fail-run`: that failure ends the run now, whatever else is still open.
  if (failRun) return { state: 'failed', reason: 'step_failed', evidence };
  const stopping = input.timedOut === true || input.budgetExhausted !== undefined || input.aborted !== undefined;
  if (evidence.open.length > 0 && !stopping) return { state: 'continue' };
  if (denied) return { state: 'failed', reason: 'approval_denied', evidence };
  if (input.timedOut) {
    // Out of time with only people left to answer: the run is left paused for them rather than thrown away.
    const waitingForPeople = evidence.awaitingApproval.length > 0 && working === 0;
    return { state: waitingForPeople ? 'paused' : 'failed', reason: 'deadline', evidence };
  }
  if (input.budgetExhausted !== undefined)
    return { state: 'failed', reason: 'budget_exhausted', evidence: { ...evidence, detail: input.budgetExhausted } };
  if (input.aborted !== undefined && evidence.open.length > 0)
    return { state: 'failed', reason: 'aborted', evidence: { ...evidence, detail: input.aborted } };
  if (evidence.rootCauses.length > 0) return { state: 'failed', reason: 'step_failed', evidence };
  // Everything settled without a failure yet not complete: all skipped (or nothing to do), or steps left blocked,
  // cancelled or unknown. Neither is success.
  if (allSettledWell) return { state: 'failed', reason: 'nothing_succeeded', evidence };
  return { state: 'failed', reason: 'incomplete', evidence };
}

/** A one-line summary of a decision, for the terminal record and the CLI. */
export function describeTerminal(decision: TerminalDecision): string {
  if (decision.state === 'continue') return 'running';
  const { reason, evidence } = decision;
  switch (reason) {
    case 'completed':
      return `complete: ${evidence.counts.succeeded ?? 0} succeeded, ${evidence.counts.skipped ?? 0} skipped`;
    case 'step_failed':
    case 'approval_denied':
      return `${reason.replace('_', ' ')}: root cause ${evidence.rootCauses.join(', ')}`;
    case 'deadline':
      return `deadline reached with ${evidence.open.length} step(s) open`;
    case 'nothing_succeeded':
      return 'no step succeeded: nothing was done';
    case 'incomplete':
      return `incomplete: ${evidence.unknown.length} unknown, ${evidence.counts.blocked ?? 0} blocked`;
    default:
      return reason;
  }
}
