/**
 * Every run reaches a terminal state (complete, failed, cancelled), or `paused` with the engine's reason, within
 * the bound; and the state it shows is the one its terminal record holds.
 */
import { FINAL_RUN_STATUSES, type InvariantCheck, OPEN_STEP_STATUSES, type Violation, violation } from './types.ts';

const openSteps = (steps: readonly { id: string; status: string }[]): string =>
  steps
    .filter((s) => OPEN_STEP_STATUSES.has(s.status))
    .map((s) => `${s.id}=${s.status}`)
    .join(', ') || 'none';

export const checkTerminal: InvariantCheck = (run) => {
  const found: Violation[] = [];
  const pausedWithReason = run.status === 'paused' && run.terminal?.state === 'paused' && run.terminal.reason !== '';
  if (run.endedAfterMs === null) {
    // Read once the stack went quiet: a run that shows an end by then was slow (a busy machine), not stuck.
    const endedLate = FINAL_RUN_STATUSES.has(run.status) || pausedWithReason;
    const why = endedLate
      ? '; slow, not stuck: it had ended by the time the stack went quiet'
      : run.quiet
        ? '; stuck: the stack went quiet with the run open'
        : '';
    found.push(
      violation(
        run,
        'terminal',
        `not terminal within ${run.boundMs} ms: status ${run.status}, open steps ${openSteps(run.steps)}${why}`,
      ),
    );
  } else if (!FINAL_RUN_STATUSES.has(run.status) && !pausedWithReason) {
    found.push(
      violation(
        run,
        'terminal',
        `ended but now shows ${run.status}${run.terminal ? ` (terminal record ${run.terminal.state})` : ' without a terminal record'}, open steps ${openSteps(run.steps)}`,
      ),
    );
  }
  if (FINAL_RUN_STATUSES.has(run.status) && run.terminal?.state !== run.status) {
    found.push(
      violation(run, 'terminal', `status ${run.status} but terminal record ${run.terminal?.state ?? 'absent'}`),
    );
  }
  return found;
};
