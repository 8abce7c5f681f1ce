/**
 * The per-step retry decision. A step gets `maxRetries + 1` attempts in all; only a retryable error spends one, a
 * permanent error fails the step at once. Backoff doubles per attempt up to a cap.
 */
import { DEFAULT_MAX_RETRIES, type FailurePolicy } from '../plan/schema.ts';

export interface RetryPolicy {
  readonly maxRetries: number;
  readonly baseSeconds: number;
  readonly capSeconds: number;
}

export type RetryDecision =
  | { readonly decision: 'retry'; readonly attempt: number; readonly delaySeconds: number }
  | { readonly decision: 'failed'; readonly reason: 'permanent' | 'exhausted' };

/**
 * The retry policy of a step: its own `maxRetries` (default 3) with the deployment's backoff numbers; a step whose
 * `onFailure` is `replan` is not retried (its first failure goes to the replanner).
 */
export function retryPolicy(
  step: { readonly maxRetries?: number | undefined; readonly onFailure?: FailurePolicy | undefined },
  backoff: { readonly baseSeconds: number; readonly capSeconds: number },
): RetryPolicy {
  return { maxRetries: step.onFailure === 'replan' ? 0 : (step.maxRetries ?? DEFAULT_MAX_RETRIES), ...backoff };
}

/**
 * Seconds to wait after attempt `attempt` (1-based) failed: min(base * 2^(attempt-1), cap), as a whole number of
 * seconds (a Step Functions Wait state takes integers), never negative.
 */
export function backoffSeconds(attempt: number, baseSeconds: number, capSeconds: number): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  const raw = Math.min(Math.max(0, baseSeconds) * 2 ** exponent, Math.max(0, capSeconds));
  return Math.ceil(Number.isFinite(raw) ? raw : Math.max(0, capSeconds));
}

/** An error without a `retryable` flag counts as transient, like any unknown failure (see isRetryable). */
export const isRetryableStepError = (error: { readonly retryable?: boolean | undefined }): boolean =>
  error.retryable !== false;

/** What to do after attempt `attempt` failed with `error`. */
export function decideRetry(
  attempt: number,
  error: { readonly retryable?: boolean | undefined },
  policy: RetryPolicy,
): RetryDecision {
  if (!isRetryableStepError(error)) return { decision: 'failed', reason: 'permanent' };
  if (attempt >= policy.maxRetries + 1) return { decision: 'failed', reason: 'exhausted' };
  return {
    decision: 'retry',
    attempt: attempt + 1,
    delaySeconds: backoffSeconds(attempt, policy.baseSeconds, policy.capSeconds),
  };
}
