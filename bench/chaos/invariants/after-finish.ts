/**
 * No event after RunFinished: once a run has finished (complete, failed or cancelled), its audit log holds nothing
 * later unless the run was reopened (RunReopened: an invalidation of a complete or failed run, or a person's replan
 * of one, made at once or on the approval of a held revision), which starts a new stretch that ends with its own
 * RunFinished. A cancelled run is never reopened. A revision held for approval on a finished run is requested and
 * decided unannounced (a rejection leaves the run finished, and nothing follows its RunFinished); an approval opens
 * the new stretch with RunReopened. `RunFinished(paused)` does not close the run: a person may still move it on.
 *
 * Events are compared by their time (`at`, milliseconds), not by their place in the log: two writes in the same
 * millisecond have no order between them, so only an event strictly later than the RunFinished counts.
 */
import { type EventObservation, type InvariantCheck, type Violation, violation } from './types.ts';

const CLOSING = new Set(['complete', 'failed', 'cancelled']);

const describe = (event: EventObservation): string =>
  `${event.type}${event.stepId === undefined ? '' : ` ${event.stepId}#${event.generation ?? '?'}`} at ${event.at}`;

export const checkAfterFinish: InvariantCheck = (run) => {
  const found: Violation[] = [];
  const time = (event: EventObservation) => Date.parse(event.at);
  const finishes = run.events.filter((e) => e.type === 'RunFinished' && CLOSING.has(String(e.detail.state)));
  const reopens = run.events.filter((e) => e.type === 'RunReopened');
  for (const finish of finishes) {
    const at = time(finish);
    const reopenedAt = reopens.map(time).filter((t) => t >= at);
    const until = reopenedAt.length > 0 ? Math.min(...reopenedAt) : Number.POSITIVE_INFINITY;
    const state = String(finish.detail.state);
    if (state === 'cancelled' && until !== Number.POSITIVE_INFINITY)
      found.push(violation(run, 'after-finish', `RunReopened after RunFinished(cancelled) at ${finish.at}`));
    const late = run.events.filter((e) => e !== finish && e.type !== 'RunReopened' && time(e) > at && time(e) < until);
    if (late.length > 0)
      found.push(
        violation(
          run,
          'after-finish',
          `${late.length} event(s) after RunFinished(${state}) at ${finish.at}: ${late.slice(0, 5).map(describe).join('; ')}`,
        ),
      );
  }
  return found;
};
