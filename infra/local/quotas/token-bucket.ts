/**
 * A token bucket, as AWS describes its API throttling (Step Functions' StartExecution: "a bucket size and a refill
 * rate per second"): the bucket starts full, every call takes a token, tokens come back at the refill rate up to the
 * bucket's size, and a call that finds no token is throttled. The clock is a parameter, so tests drive it.
 */

export interface TokenBucketOptions {
  /** Tokens the bucket holds when full: the burst. */
  readonly capacity: number;
  /** Tokens added per second. */
  readonly refillPerSecond: number;
  /** Milliseconds (default `performance.now`). */
  readonly now?: () => number;
}

export interface TokenBucket {
  /** Takes `count` tokens if the bucket has them; false (nothing taken) when it does not. */
  tryTake(count?: number): boolean;
  /** Tokens in the bucket now. */
  tokens(): number;
}

export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  const { capacity, refillPerSecond } = options;
  if (!(capacity > 0) || !(refillPerSecond > 0))
    throw new RangeError(
      `a token bucket needs a positive size and refill rate, got ${capacity} and ${refillPerSecond}`,
    );
  const now = options.now ?? (() => performance.now());
  let level = capacity;
  let at = now();
  const refill = (): void => {
    const time = now();
    if (time > at) level = Math.min(capacity, level + ((time - at) / 1000) * refillPerSecond);
    at = Math.max(at, time);
  };
  return {
    tryTake(count = 1) {
      refill();
      if (level < count) return false;
      level -= count;
      return true;
    },
    tokens() {
      refill();
      return level;
    },
  };
}
