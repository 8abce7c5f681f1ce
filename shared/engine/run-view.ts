/**
 * The run status a reader sees. `paused` is derived rather than stored while a run is live: a run is paused when
 * nothing can move without a person (no step running, started or between retries, and at least one waiting for an
 * approval or a review). A stored status (a terminal one, or paused at a deadline) is shown as it is.
 */
import type { RunStatus, StepStatus } from '../plan/schema.ts';
import { isOpenStepStatus } from './statuses.ts';

const MOVING: ReadonlySet<StepStatus> = new Set(['ready', 'running', 'retrying']);

/** Whether only people can move the run on: something awaits approval and nothing is running, ready or retrying. */
export function isWaitingForPeople(statuses: Iterable<StepStatus>): boolean {
  let awaiting = false;
  for (const status of statuses) {
    if (MOVING.has(status)) return false;
    if (status === 'awaiting_approval') awaiting = true;
  }
  return awaiting;
}

/** The status to show for a run, given its stored status and its steps' statuses. */
export function deriveRunStatus(stored: RunStatus, statuses: Iterable<StepStatus>): RunStatus {
  if (stored !== 'running') return stored;
  return isWaitingForPeople(statuses) ? 'paused' : 'running';
}

/** Finished steps over all steps (superseded ones left out), for progress counters. */
export function progress(statuses: Iterable<StepStatus>): { done: number; total: number } {
  let done = 0;
  let total = 0;
  for (const status of statuses) {
    if (status === 'superseded') continue;
    total += 1;
    if (!isOpenStepStatus(status)) done += 1;
  }
  return { done, total };
}
