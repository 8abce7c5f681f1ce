/**
 * Polling that never overlaps itself, pauses while the tab is hidden, and stops for good on dispose. `tick` returns
 * false to stop (a finished run has nothing more to show).
 */
export function poll(tick, intervalMs) {
  let timer;
  let stopped = false;
  const run = async () => {
    if (stopped) return;
    let again = true;
    if (document.visibilityState !== 'hidden') {
      try {
        again = (await tick()) !== false;
      } catch {
        // A failed refresh keeps the last good view; the next tick tries again.
      }
    }
    if (!stopped && again) timer = setTimeout(run, intervalMs);
  };
  timer = setTimeout(run, intervalMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    /** Runs one tick now (after a decision, say) and keeps the rhythm. */
    now() {
      clearTimeout(timer);
      void run();
    },
  };
}

export const TERMINAL_RUN = new Set(['complete', 'failed', 'cancelled']);
