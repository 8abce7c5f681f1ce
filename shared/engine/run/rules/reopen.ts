/**
 * A finished run runs again (an invalidation, a revision made current, a person's action on a failed compensation):
 * its terminal record goes to its history, and a new opening begins, which a new run execution waits for (the old
 * execution's late words name the old opening and change nothing). A cancelled run never reopens.
 */
import type { Decision } from '../decision.ts';

/** Whether the run is finished in a way that can run again: complete, failed, or held for a person. */
export function isReopenable(d: Decision): boolean {
  const { status, terminal } = d.run;
  return status === 'complete' || status === 'failed' || (status === 'paused' && terminal !== undefined);
}

/** Reopens the run if it is finished; true when it did. */
export function reopenIfFinished(d: Decision, reason: string): boolean {
  if (!isReopenable(d)) return false;
  d.emit({ type: 'RunReopened', at: d.at, opening: (d.run.reopened ?? 0) + 1, reason });
  return true;
}
