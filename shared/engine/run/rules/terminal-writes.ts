/**
 * The two ways a run stops for now: it ends, or it pauses for a person. Both are one RunFinished event (its terminal
 * record says which), which the shell answers the run machine's waiter with.
 */
import type { TerminalRecord } from '../../../ports/records/runs.ts';
import type { Decision } from '../decision.ts';

/** Pauses that hold a run for a person: nothing but a reopening moves such a run on. */
export const HELD_REASONS: ReadonlySet<string> = new Set([
  'max_replans',
  'no_progress',
  'approval_expired',
  'budget_exhausted',
  'rollback_required',
  'compensation_failed',
  'failure_paused',
]);

export type HeldReason =
  | 'max_replans'
  | 'no_progress'
  | 'approval_expired'
  | 'budget_exhausted'
  | 'rollback_required'
  | 'compensation_failed'
  | 'failure_paused';

/** The run is live (planning, running, paused) and holds no terminal record yet. */
export const isLive = (d: Decision): boolean =>
  d.run.status === 'planning' || d.run.status === 'running' || d.run.status === 'paused';

/** Ends the run (or pauses it: `terminal.state` paused) with RunFinished; a cancel's says who asked. */
export function finish(d: Decision, terminal: Omit<TerminalRecord, 'at'>, requestedBy?: string | null): void {
  d.emit({
    type: 'RunFinished',
    at: d.at,
    terminal: { ...terminal, at: d.at },
    ...(requestedBy === undefined ? {} : { requestedBy }),
  });
}

/** Holds a live run for a person; a run that already holds a terminal record keeps it. */
export function pause(d: Decision, reason: HeldReason, evidence: Readonly<Record<string, unknown>>): void {
  if (d.run.terminal !== undefined || (d.run.status !== 'running' && d.run.status !== 'paused')) return;
  finish(d, { state: 'paused', reason, evidence });
}
