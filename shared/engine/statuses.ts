/**
 * Step and run statuses: which are terminal, which still hold work, and which step transitions are allowed within
 * one generation. A new generation (replanning, invalidation) resets a step to `pending` by a separate rule, so it
 * is not listed here.
 */
import type { RunStatus, StepStatus } from '../plan/schema.ts';

/**
 * A step in one of these does no more work of its own in its generation. Only the compensation path (saga) leaves
 * one: succeeded → compensating → compensated | compensation_failed (COMPENSATION_TRANSITIONS).
 */
export const TERMINAL_STEP_STATUSES: ReadonlySet<StepStatus> = new Set([
  'succeeded',
  'failed',
  'skipped',
  'blocked',
  'superseded',
  'cancelled',
  'compensating',
  'compensated',
  'compensation_failed',
]);

/** The compensation of a finished mutating step: started, done, or failed (a person has to act). */
export const COMPENSATION_STEP_STATUSES: ReadonlySet<StepStatus> = new Set([
  'compensating',
  'compensated',
  'compensation_failed',
]);

/** Work left to do: waiting for upstream, started, running, between retries or waiting for a person. */
export const OPEN_STEP_STATUSES: ReadonlySet<StepStatus> = new Set([
  'pending',
  'ready',
  'running',
  'retrying',
  'awaiting_approval',
]);

/** A step execution exists and has claimed the step: the states a result (failure, verdict, completion) comes from. */
export const IN_FLIGHT_STEP_STATUSES: readonly StepStatus[] = ['running', 'retrying', 'awaiting_approval'];

/**
 * The statuses in which someone else ends a generation, whether or not it was claimed (a cancellation, a replan):
 * one ended so while claimed ended in flight, and its next generation's history keeps the claim (as for one that
 * was still in flight), so whoever ends the run can still close the attempt its gate had recorded.
 */
export const CLOSED_IN_FLIGHT_STEP_STATUSES: readonly StepStatus[] = ['cancelled', 'superseded'];

/** Not yet claimed by any step execution. */
export const CLAIMABLE_STEP_STATUSES: readonly StepStatus[] = ['pending', 'ready'];

/** Finished in a way that lets dependents go on. */
export const RELEASING_STEP_STATUSES: ReadonlySet<StepStatus> = new Set(['succeeded', 'skipped']);

/** A run in one of these is finished for good; `paused` is not: a person may still move it on. */
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['complete', 'failed', 'cancelled']);

/** A run whose open steps may still move: running, or paused for a person (not planning, not finished). */
export const STEP_MOVING_RUN_STATUSES: readonly RunStatus[] = ['running', 'paused'];
export const letsStepsMove = (status: RunStatus): boolean => STEP_MOVING_RUN_STATUSES.includes(status);

/** What a run record says about a cancellation: the cancel's mark, and a cancellation with compensation. */
export interface CancelMarks {
  readonly status: RunStatus;
  readonly cancelling?: boolean | undefined;
  readonly cancelCompensation?: boolean | undefined;
}

/**
 * A cancellation has begun and the run has not ended yet: the cancel marked it (plain or with compensation) before
 * it closed the open steps. One fact, read by every refusal (a claim, the gate before a side effect, an
 * invalidation, a revision). A mark on a finished run is a cancel that lost the race to the run's end: it says
 * nothing any more (a reopening drops it).
 */
export const isBeingCancelled = (run: CancelMarks): boolean =>
  letsStepsMove(run.status) && (run.cancelling === true || run.cancelCompensation === true);

/**
 * Whether a step of the run may start an attempt (be claimed, or pass the gate before a side effect): the run lets
 * steps move and no cancellation has begun. A cancel marks the run before it lists and closes the open steps, so a
 * generation it did not list (started after that) reads the mark when it loads, and never runs.
 */
export const letsAttemptsStart = (run: CancelMarks): boolean => letsStepsMove(run.status) && !isBeingCancelled(run);

/**
 * A claim found its step open and unclaimed in this generation, in a run whose cancellation has begun: the cancel has
 * not closed the step yet, and may have died between its mark and its end (a store failure, a client that gave up).
 * Whoever finds this finishes the cancel (idempotent); nothing else would move the run before its deadline. (Once the
 * run has ended, its cancel's own close after the end write, or its repeat, closes what is left.)
 */
export const leftOpenByCancel = (
  run: CancelMarks,
  step: { readonly status: StepStatus; readonly generation: number; readonly claimedBy?: string | undefined },
  generation: number,
): boolean =>
  isBeingCancelled(run) &&
  step.generation === generation &&
  step.claimedBy === undefined &&
  CLAIMABLE_STEP_STATUSES.includes(step.status);

/**
 * Whether the run's steps may be invalidated (a request, a resource change): it has started, and it is neither
 * cancelled nor being cancelled. A marked run would only get generations whose claims refuse, which its cancel then
 * closes: it is refused as a cancelled one is, and a resource change leaves it alone.
 */
export const takesInvalidation = (run: CancelMarks): boolean =>
  run.status !== 'planning' && run.status !== 'cancelled' && !isBeingCancelled(run);

/**
 * Whether a person's decision on a gate's approval may still count: its run lets steps move, no cancellation has
 * begun (the cancel closes the gate: a decision let through would end it in a run the person asked to stop), and its
 * step is still in flight in the approval's generation. A gate whose step was closed (a cancel) between creating the
 * approval and holding the step leaves a pending approval behind; deciding it would announce a decision after the
 * run's end.
 */
export const awaitsDecision = (
  run: CancelMarks | undefined,
  step: { readonly status: StepStatus; readonly generation: number } | undefined,
  generation: number,
): boolean =>
  run !== undefined &&
  step !== undefined &&
  letsAttemptsStart(run) &&
  step.generation === generation &&
  IN_FLIGHT_STEP_STATUSES.includes(step.status);

/** A run that may still change state (the ones a conditional run update starts from). */
export const LIVE_RUN_STATUSES: readonly RunStatus[] = ['planning', 'running', 'paused'];

const STEP_TRANSITIONS: Readonly<Record<StepStatus, readonly StepStatus[]>> = {
  // claim (running), `when` false (skipped), bad input (failed), upstream failed (blocked)
  pending: ['ready', 'running', 'skipped', 'failed', 'blocked', 'cancelled', 'superseded'],
  ready: ['running', 'skipped', 'failed', 'blocked', 'cancelled', 'superseded'],
  running: ['retrying', 'awaiting_approval', 'succeeded', 'failed', 'cancelled', 'superseded'],
  // the next attempt runs while the record still says retrying; its result comes from there
  retrying: ['running', 'retrying', 'awaiting_approval', 'succeeded', 'failed', 'cancelled', 'superseded'],
  awaiting_approval: ['running', 'retrying', 'succeeded', 'failed', 'cancelled', 'superseded'],
  // A finished mutating step of a segment that failed (or of a run cancelled with compensation) is undone.
  succeeded: ['compensating'],
  failed: [],
  skipped: [],
  blocked: [],
  superseded: [],
  cancelled: [],
  compensating: ['compensated', 'compensation_failed'],
  compensated: [],
  // A person retries the failed compensation, or resolves it by hand (with a note).
  compensation_failed: ['compensating', 'compensated'],
};

/** The only ways out of a terminal status: the compensation path. */
export const COMPENSATION_TRANSITIONS: readonly (readonly [StepStatus, StepStatus])[] = [
  ['succeeded', 'compensating'],
  ['compensating', 'compensated'],
  ['compensating', 'compensation_failed'],
  ['compensation_failed', 'compensating'],
  ['compensation_failed', 'compensated'],
];

export const isTerminalStepStatus = (status: StepStatus): boolean => TERMINAL_STEP_STATUSES.has(status);
export const isOpenStepStatus = (status: StepStatus): boolean => OPEN_STEP_STATUSES.has(status);
export const isTerminalRunStatus = (status: RunStatus): boolean => TERMINAL_RUN_STATUSES.has(status);

/** Whether a step may move from `from` to `to` within its generation. */
export function canTransition(from: StepStatus, to: StepStatus): boolean {
  return STEP_TRANSITIONS[from].includes(to);
}

/** Every status a step may move to `to` from: the `from` list of a conditional transition. */
export function transitionSources(to: StepStatus): StepStatus[] {
  return (Object.keys(STEP_TRANSITIONS) as StepStatus[]).filter((from) => STEP_TRANSITIONS[from].includes(to));
}
