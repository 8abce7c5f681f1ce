/**
 * How a run page learns that something happened: the one place that talks to the transport. While the run is live it
 * follows the run's event feed (`GET /runs/{id}/events?follow=1&wait=<s>&after=<last seq>`): a long poll the server
 * answers as soon as events follow the cursor, or after FOLLOW_WAIT_S with none, so a change shows at once and a quiet
 * run costs one request every FOLLOW_WAIT_S. (A long poll, not the embedded server's event stream: it works the same
 * deployed, where API Gateway answers whole.) A paused or finished run (`quiet`) is read every QUIET_MS; nothing at
 * all while the tab is hidden, and one tick as soon as it shows again. Every tick ends with `onTick`, the page's slow
 * safety net (its head, a reload when events could not say what changed).
 */
import { get } from '../api.js';

export const QUIET_MS = 10_000;
/** The longest wait of one long poll: the safety net's own rhythm while nothing happens. */
export const FOLLOW_WAIT_S = 15;
/** Between two long polls: a pause, so that a failing or instantly answered poll cannot spin. */
const FOLLOW_GAP_MS = 100;
/** Events read per request; a fuller page is followed at once by the next. */
const PAGE = 1000;
const MAX_PAGES_A_TICK = 10;

/**
 * `onEvents(events, { history })` gets each batch, oldest first (it may return a promise: the next tick waits for it);
 * `onTick()` runs after every tick, events or not (a heartbeat for what events do not say).
 */
export function runFeed(runId, { onEvents, onTick }) {
  const path = `/runs/${encodeURIComponent(runId)}/events`;
  let after;
  let cadence = 'live';
  let timer;
  let stopped = false;
  let busy = false;

  const read = async (maxPages = MAX_PAGES_A_TICK, history = false, follow = false) => {
    for (let pages = 0; pages < maxPages; pages++) {
      const query = new URLSearchParams({ limit: String(PAGE) });
      if (after) query.set('after', after);
      // Only the first page waits: what follows a full page is there already.
      if (follow && pages === 0) {
        query.set('follow', '1');
        query.set('wait', String(FOLLOW_WAIT_S));
      }
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
    timer = setTimeout(tick, cadence === 'live' ? FOLLOW_GAP_MS : QUIET_MS);
  };

  async function tick() {
    if (stopped || busy) return;
    if (document.visibilityState === 'hidden') return;
    busy = true;
    try {
      await read(MAX_PAGES_A_TICK, false, cadence === 'live');
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
