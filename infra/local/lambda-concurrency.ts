/**
 * Lambda's concurrency, optionally, in the embedded runtime: a function may run at most so many invocations at
 * once (its reserved concurrency, or the account's), and a synchronous invocation beyond that is throttled, not
 * queued: Step Functions sees `Lambda.TooManyRequestsException`, which the machines retry with backoff without
 * spending an attempt of the step. Without a limit every invocation runs at once, as with unreserved concurrency
 * on an account that has room.
 */
import { AslError } from './asl-errors.ts';

export type Invoke = (payload: unknown) => Promise<unknown>;

/**
 * What Step Functions reports for a Task whose Lambda the account's concurrency throttled: the service's
 * `TooManyRequestsException` (HTTP 429, Reason ConcurrentInvocationLimitExceeded) under the Task's error name.
 */
export function accountThrottled(limit: number): AslError {
  const error = new AslError(
    'Lambda.TooManyRequestsException',
    `Rate Exceeded. (Service: Lambda, Status Code: 429, Error Code: TooManyRequestsException, Reason: ConcurrentInvocationLimitExceeded, account concurrency ${limit})`,
  );
  return Object.assign(error, { reason: 'ConcurrentInvocationLimitExceeded' });
}

/** What Step Functions reports for a Task whose Lambda was throttled. */
export function lambdaThrottled(functionKey: string, limit: number): AslError {
  return new AslError(
    'Lambda.TooManyRequestsException',
    `Rate Exceeded. (Service: Lambda, Status Code: 429, function ${functionKey}, concurrency ${limit})`,
  );
}

export interface ConcurrencyLimit {
  /** The handler, throttled beyond the limit. */
  readonly invoke: Invoke;
  /** Invocations running now. */
  inFlight(): number;
  /** Invocations refused so far. */
  throttled(): number;
}

/** At most `limit` invocations of `handler` at once; one more is refused with Lambda's throttle. */
export function limitConcurrency(functionKey: string, limit: number, handler: Invoke): ConcurrencyLimit {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`${functionKey}: a concurrency limit is 1 or more`);
  let running = 0;
  let refused = 0;
  return {
    async invoke(payload) {
      if (running >= limit) {
        refused += 1;
        throw lambdaThrottled(functionKey, limit);
      }
      running += 1;
      try {
        return await handler(payload);
      } finally {
        running -= 1;
      }
    },
    inFlight: () => running,
    throttled: () => refused,
  };
}
