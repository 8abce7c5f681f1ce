/**
 * A step execution's word about its work, and what follows: the step skips, fails before any attempt, succeeds,
 * retries, or fails for good; a success or a skip lets its dependents go, a final failure blocks its downstream and
 * does what the step's `onFailure` says. The execution proposes (it computed its outcome with the same pure rules, to
 * route its own state machine), the decider decides: an attempt of a generation that is no longer current, of
 * another execution, or one already counted changes nothing; one that ends after its step was closed is kept as
 * evidence only.
 */
import type { StepError } from '../../../plan/schema.ts';
import type { StepRecord } from '../../../ports/records/steps.ts';
import { retryPolicy } from '../../retry.ts';
import { decideAttemptOutcome } from '../../step-lifecycle.ts';
import { attemptTimeLimit, boundRetry } from '../../step-seconds.ts';
import { traceEntry } from '../../trace.ts';
import type { AttemptEnded, ExecutionFailed } from '../commands.ts';
import type { Decision } from '../decision.ts';
import { closeStepApprovals } from './approval-closing.ts';
import { countUsage, planBudget, runBudget, runBudgetStop, stepOverBudget, stopOverBudget } from './budget.ts';
import { advanceCompensation } from './compensation.ts';
import { pause, settle } from './ending.ts';
import { blockDownstream, closeOpenSteps, dependentsOf, letsAttemptsStart, startDue } from './flow.ts';
import { askReplan } from './replans.ts';

const IN_FLIGHT = new Set(['running', 'retrying', 'awaiting_approval']);

/** The attempt an execution's next word is about: the one under way in the step's generation. */
function attemptUnderWay(step: StepRecord): number {
  return step.status === 'retrying' ? step.attempts + 1 : Math.max(1, step.attempts);
}

export function attemptEnded(d: Decision, command: AttemptEnded): void {
  const step = d.step(command.stepId);
  if (step === undefined || step.generation !== command.generation || step.claimedBy !== command.execution) return;
  const { outcome } = command;
  const n = outcome.kind === 'skipped' || outcome.kind === 'rejected' ? 0 : command.attempt;
  if (!IN_FLIGHT.has(step.status)) {
    // Closed while the attempt ran (a cancel, the deadline): what it did is kept, the step stays as it is.
    if (step.status === 'cancelled' && n >= step.attempts && outcome.kind !== 'skipped') {
      countUsage(d, step, n, command.usage);
      d.emit({
        type: 'StepEvidence',
        at: d.at,
        stepId: step.stepId,
        generation: step.generation,
        attempts: Math.max(step.attempts, n),
        trace: [
          traceEntry(
            'exec',
            `${command.note} — after the step was cancelled (${step.error?.code ?? 'cancelled'}); it stays cancelled`,
            d.at,
          ),
        ],
      });
    }
    return;
  }
  if (n !== 0 && n !== attemptUnderWay(step)) return; // a repeat of a word already taken, or a stray one
  if (n === 0 && step.attempts > 1) return;
  countUsage(d, step, n, command.usage);
  switch (outcome.kind) {
    case 'skipped':
      d.emit({
        type: 'StepSkipped',
        at: d.at,
        stepId: step.stepId,
        generation: step.generation,
        reason: outcome.reason,
      });
      afterLettingGo(d, step.stepId);
      break;
    case 'rejected':
      failStep(d, step.stepId, outcome.error, 0, outcome.error.message);
      break;
    case 'notStarted':
      d.emit({
        type: 'StepEvidence',
        at: d.at,
        stepId: step.stepId,
        generation: step.generation,
        attempts: step.attempts,
        trace: [traceEntry('exec', command.note, d.at)],
      });
      break;
    case 'succeeded':
      succeedOrFail(d, step.stepId, n, outcome.confidence, command);
      break;
    case 'failed':
      failedAttempt(d, step.stepId, n, outcome.error, command.note, command.judged);
      break;
  }
  stopOverBudget(d);
  settle(d);
}

/** A verified result, unless the step is over its own budget. */
function succeedOrFail(d: Decision, stepId: string, n: number, confidence: number | null, command: AttemptEnded): void {
  const step = d.step(stepId);
  if (step === undefined) return;
  const over = stepOverBudget(d, step);
  if (over !== undefined) {
    failStep(d, stepId, over, n, `failed (permanent error): ${over.code} ${over.message}`);
    return;
  }
  const judged = command.judged !== undefined;
  d.emit({
    type: 'StepSucceeded',
    at: d.at,
    stepId,
    generation: step.generation,
    attempts: Math.max(step.attempts, n),
    confidence,
    trace: [
      traceEntry(judged ? 'judge' : 'exec', command.note, d.at),
      traceEntry(
        'judge',
        `succeeded with attempt ${n}${confidence === null ? '' : ` (confidence ${confidence})`}`,
        d.at,
      ),
    ],
  });
  closeStepApprovals(d, stepId, step.generation, 'the step no longer waits for this decision');
  afterLettingGo(d, stepId);
}

/**
 * A failed attempt: another one follows after the backoff while the step's policy, its time and the run's budget
 * leave room for it; otherwise the step fails for good.
 */
function failedAttempt(
  d: Decision,
  stepId: string,
  n: number,
  error: StepError,
  note: string,
  judged: AttemptEnded['judged'],
): void {
  const step = d.step(stepId);
  const planStep = d.plan?.byId.get(stepId);
  if (step === undefined || planStep === undefined) return;
  const policy = retryPolicy(planStep, d.draft.settings.retry);
  const limit = attemptTimeLimit(
    { step: planStep.budget, stepStartedAt: step.startedAt, run: planBudget(d), runCreatedAt: d.run.createdAt },
    d.at,
  );
  let outcome = boundRetry(decideAttemptOutcome(n, { error }, policy), limit, d.at);
  const over = outcome.kind === 'retry' ? stepOverBudget(d, step) : undefined;
  if (over !== undefined) outcome = { kind: 'fail', error: over, why: 'permanent' };
  const spent = outcome.kind === 'retry' ? runBudget(d) : undefined;
  if (spent !== undefined)
    outcome = { kind: 'fail', error: runBudgetStop(`not made: ${spent.detail}`), why: 'permanent' };
  if (outcome.kind === 'retry' && letsAttemptsStart(d.run)) {
    d.emit({
      type: 'StepRetrying',
      at: d.at,
      stepId,
      generation: step.generation,
      attempt: n,
      delaySeconds: outcome.delaySeconds,
      error: outcome.error,
      trace: [traceEntry('fail', `${note}; attempt ${outcome.attempt} in ${outcome.delaySeconds}s`, d.at)],
    });
    return;
  }
  const failure = outcome.kind === 'fail' ? outcome.error : error;
  const by = judged?.by ? ` by ${judged.by}` : '';
  const why = judged
    ? `${judged.decision}${by}`
    : outcome.kind === 'fail' && outcome.why === 'exhausted'
      ? `after ${n} attempt(s)`
      : 'permanent error';
  failStep(d, stepId, failure, n, `failed (${why}): ${failure.code} ${failure.message}`);
}

/** The step's generation fails for good; what follows is its policy's. */
export function failStep(d: Decision, stepId: string, error: StepError, attempts: number, note: string): void {
  const step = d.step(stepId);
  if (step === undefined) return;
  d.emit({
    type: 'StepFailed',
    at: d.at,
    stepId,
    generation: step.generation,
    attempts: Math.max(step.attempts === 1 && attempts === 0 ? 0 : step.attempts, attempts),
    error,
    trace: [traceEntry('fail', note, d.at)],
  });
  closeStepApprovals(d, stepId, step.generation, error.message);
  afterFailure(d, stepId);
}

/** A success, a skip or an accepted failure: the dependents with nothing left to wait for start. */
export function afterLettingGo(d: Decision, stepId: string): void {
  if (d.plan?.byId.get(stepId)?.segment !== undefined) advanceCompensation(d);
  startDue(d, dependentsOf(d, stepId));
}

/** What follows a final failure: its downstream blocked, then the step's `onFailure`. */
export function afterFailure(d: Decision, stepId: string): void {
  const planStep = d.plan?.byId.get(stepId);
  const step = d.step(stepId);
  if (planStep === undefined || step === undefined) return;
  if (planStep.onFailure === 'continue') {
    afterLettingGo(d, stepId);
    return;
  }
  blockDownstream(d, stepId);
  if (planStep.segment !== undefined) advanceCompensation(d);
  if (planStep.onFailure === 'pause')
    pause(d, 'failure_paused', {
      stepId,
      generation: step.generation,
      error: step.error ?? null,
      detail: `step ${stepId} failed and its onFailure policy is pause: a person decides what happens next`,
    });
  if (planStep.onFailure === 'fail-run') {
    closeOpenSteps(d, {
      code: 'E_RUN_FAILED',
      message: `the run failed: step ${stepId} failed under onFailure fail-run`,
      retryable: false,
    });
    return;
  }
  askReplan(d, stepId);
}

/**
 * The step machine's execution failed for good outside an attempt's own answer: RunStep outlasted the platform's
 * retries (a retryable failure of the attempt under way, or of the step before its first attempt), or the wait for a
 * decision failed (a permanent one).
 */
export function executionFailed(d: Decision, command: ExecutionFailed): void {
  const step = d.step(command.stepId);
  if (step === undefined || step.generation !== command.generation || !IN_FLIGHT.has(step.status)) return;
  const n = command.attempt ?? attemptUnderWay(step);
  if (n !== attemptUnderWay(step)) return;
  failedAttempt(
    d,
    step.stepId,
    n,
    command.error,
    `attempt ${n} failed: ${command.error.code} ${command.error.message}`,
    undefined,
  );
  stopOverBudget(d);
  settle(d);
}
