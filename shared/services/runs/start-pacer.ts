/**
 * The shell's pace for execution starts: a token bucket per process, shaped like Step Functions' StartExecution
 * quota (a burst, then a refill per second), kept below it so that a release to a 5,000-wide layer or a thousand
 * runs starting at once stay inside the account's bucket instead of being throttled by it. A start reserves its
 * turn; one whose turn is further off than a batch may wait is not made now: the shell hands it back to the run's
 * decider, which defers it durably (rules/start-pacing.ts), with the pacer's estimate of when there is room.
 *
 * The bucket is per process: on AWS several decider containers each keep one, and the account's bucket is shared
 * by them and by the API's run starts, so a throttle can still come; it is survived the same way (the start goes
 * back to the decider), never turned into a failure.
 */

export interface StartPacerOptions {
  /** Starts per second, the refill. */
  readonly ratePerSecond: number;
  /** Starts allowed at once when the bucket is full. */
  readonly burst: number;
  /** How long one start may wait for its turn before it is handed back (milliseconds). */
  readonly maxWaitMs: number;
  /** Milliseconds (default Date.now). */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface StartPacer {
  /** Waits for a start's turn: true once it may start, false at once when its turn is beyond `maxWaitMs`. */
  take(): Promise<boolean>;
  /** Seconds until the pacer would have room for `count` more starts. */
  secondsFor(count: number): number;
}

/** AWS's StartExecution refill in us-east-1 is 300 a second (bucket 1,300): cairn's decider paces below it. */
export const DEFAULT_START_PACING: StartPacerOptions = Object.freeze({
  ratePerSecond: 200,
  burst: 800,
  maxWaitMs: 2_000,
});

const sleepFor = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function createStartPacer(options: StartPacerOptions): StartPacer {
  const { ratePerSecond, burst, maxWaitMs } = options;
  if (!(ratePerSecond > 0) || !(burst >= 1) || !(maxWaitMs >= 0))
    throw new RangeError(`a start pacer needs a positive rate and burst, got ${ratePerSecond} and ${burst}`);
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? sleepFor;
  // Tokens may go below zero: each start waiting for its turn holds a reservation, served in the order taken.
  let level = burst;
  let at = now();
  const refill = (): void => {
    const time = now();
    if (time > at) level = Math.min(burst, level + ((time - at) / 1000) * ratePerSecond);
    at = Math.max(at, time);
  };
  return {
    async take() {
      refill();
      const waitMs = level >= 1 ? 0 : ((1 - level) / ratePerSecond) * 1000;
      if (waitMs > maxWaitMs) return false;
      level -= 1;
      if (waitMs > 0) await sleep(waitMs);
      return true;
    },
    secondsFor(count) {
      refill();
      const short = Math.max(0, count - level);
      return short / ratePerSecond;
    },
  };
}
