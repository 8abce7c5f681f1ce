/**
 * Step and run statuses: which are terminal, which still hold work, and whether a run lets its steps move or is
 * being cancelled. The run's decider (engine/run) is what moves a step from one to another.
 */
import type { RunStatus, StepStatus } from '../plan/schema.ts';

/**
 * A step in one of these does no more work of its own in its generation. Only the compensation path (saga) leaves
 * one: succeeded → compensating → compensated | compensation_failed.
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

/** Not yet claimed by any step execution. */
export const CLAIMABLE_STEP_STATUSES: readonly StepStatus[] = ['pending', 'ready'];

/** Finished in a way that lets dependents go on. */
export const RELEASING_STEP_STATUSES: ReadonlySet<StepStatus> = new Set(['succeeded', 'skipped']);

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

export const isTerminalStepStatus = (status: StepStatus): boolean => TERMINAL_STEP_STATUSES.has(status);
export const isOpenStepStatus = (status: StepStatus): boolean => OPEN_STEP_STATUSES.has(status);
