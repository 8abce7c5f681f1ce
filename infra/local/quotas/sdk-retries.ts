/**
 * The AWS SDK's standard retries, for a call the embedded runtime answers without an SDK client in between
 * (StartExecution on the local executions): on AWS a throttled call is tried again by the client before cairn's code
 * hears of it, so the quota is rehearsed behind the same retries. Standard mode as the installed SDK has it: 3
 * attempts, a throttle waited out with full jitter over 1 s doubling (at most 20 s); the error that finally surfaces
 * carries the attempts and the delay in its `$metadata`, as the SDK's does. The client's retry quota (500 tokens a
 * process, 5 per throttled retry) is not rehearsed: one embedded process stands for many Lambda containers.
 */

export interface SdkRetryOptions {
  /** Attempts, the first included (the SDK's default: 3). */
  readonly maxAttempts?: number;
  /** In [0, 1): the jitter (default Math.random). */
  readonly random?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Told of every attempt that failed with a throttle (the last one included). */
  readonly onThrottle?: () => void;
}

const THROTTLING_DELAY_BASE_MS = 1_000;
const MAXIMUM_RETRY_DELAY_MS = 20_000;

/** The wait before retry `retry` (0 for the first retry): full jitter over the doubling throttling delay. */
export const throttleBackoffMs = (retry: number, random: number): number =>
  Math.floor(random * Math.min(THROTTLING_DELAY_BASE_MS * 2 ** retry, MAXIMUM_RETRY_DELAY_MS));

const sleepFor = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `attempt`, trying a throttled one again as the SDK would; any other error surfaces at once. */
export async function withSdkRetries<T>(
  attempt: () => Promise<T>,
  isThrottle: (error: unknown) => boolean,
  options: SdkRetryOptions = {},
): Promise<T> {
  const maxAttempts = options.maxAttempts ?? 3;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? sleepFor;
  let waited = 0;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isThrottle(error)) throw error;
      options.onThrottle?.();
      if (tries >= maxAttempts) {
        const metadata = (error as { $metadata?: Record<string, unknown> }).$metadata;
        if (metadata !== undefined) Object.assign(metadata, { attempts: tries, totalRetryDelay: waited });
        throw error;
      }
      const delay = throttleBackoffMs(tries - 1, random());
      waited += delay;
      await sleep(delay);
    }
  }
}
