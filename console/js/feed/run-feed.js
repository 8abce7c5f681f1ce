/**
 * How a run page learns that something happened: the one place that talks to the transport. Today it polls the
 * run's audit log (`GET /runs/{id}/events?after=<last seq>`), which answers only what is new, so a quiet run costs
 * a few bytes a tick; a live event stream will replace the body of `tick` and nothing else. The cadence is the
 * caller's: `live` every `liveMs`, `quiet` (a paused or finished run) every QUIET_MS; nothing at all while the tab
 * is hidden, and one tick as soon as it shows again.
 */
import { get } from '../api.js';

export const QUIET_MS = 10_000;
/** Events read per request; a fuller page is followed at once by the next. */
const PAGE = 1000;
const MAX_PAGES_A_TICK = 10;

/**
 * `onEvents(events, { history })` gets each batch, oldest first (it may return a promise: the next tick waits for it);
 * `onTick()` runs after every tick, events or not (a heartbeat for what events do not say).
 */
export function runFeed(runId, { liveMs, onEvents, onTick }) {
  const path = `/runs/${encodeURIComponent(runId)}/events`;
  let after;
  let cadence = 'live';
  let timer;
  let stopped = false;
  let busy = false;

  const read = async (maxPages = MAX_PAGES_A_TICK, history = false) => {
    for (let pages = 0; pages < maxPages; pages++) {
      const query = new URLSearchParams({ limit: String(PAGE) });
      if (after) query.set('after', after);
      const { events, nextCursor } = await get(`${path}?${query}`);
      if (events.length > 0) {
        after = events.at(-1).seq;
        await onEvents(events, { history });
      }
      if (!nextCursor || stopped) return;
    }
  };

  const schedule = () => {
    clearTimeout(timer);
    if (stopped || document.visibilityState === 'hidden') return;
    timer = setTimeout(tick, cadence === 'live' ? liveMs : QUIET_MS);
  };

  async function tick() {
    if (stopped || busy) return;
    if (document.visibilityState === 'hidden') return;
    busy = true;
    try {
      await read();
      await onTick?.();
    } catch {
      // A failed read keeps the last good view; the next tick asks again from the same place.
    } finally {
      busy = false;
      schedule();
    }
  }

  const onVisibility = () => {
    if (document.visibilityState === 'hidden') clearTimeout(timer);
    else void tick();
  };
  document.addEventListener('visibilitychange', onVisibility);

  return {
    /**
     * Reads the log as it stands (every page, handed to `onEvents` as history) and then ticks. The page reads the
     * run after this, so whatever happens meanwhile comes in the first tick: nothing falls between the two.
     */
    async start() {
      try {
        await read(Number.POSITIVE_INFINITY, true);
      } finally {
        schedule();
      }
    },
    setCadence(next) {
      if (next === cadence) return;
      cadence = next;
      if (!busy) schedule();
    },
    /** One tick now (after an action of the page's own), keeping the rhythm. */
    now() {
      clearTimeout(timer);
      void tick();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    },
  };
}
