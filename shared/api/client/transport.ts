/**
 * How the client sends one logical call: each attempt with its own timeout, and, when the operation may be sent
 * again (its `x-cairn-retry` in the contract), again after a network error, a 429 or a 503, with jittered
 * exponential backoff (bounded), or after what the answer's Retry-After asks. A `keyed` operation carries an
 * Idempotency-Key, one fresh UUID per logical call kept across its attempts, so the server answers a retry with the
 * first attempt's result instead of doing the thing twice.
 */
import { randomUUID } from 'node:crypto';
import type { Retry } from '../contract/route.ts';
import { ApiCallError, UNREACHABLE } from './errors.ts';

/** How a request is sent; tests pass their own (the same shape as fetch, with the URL as a string). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

export interface RetryEvent {
  /** The attempt that failed (1 is the first). */
  readonly attempt: number;
  readonly delayMs: number;
  /** `HTTP 503`, `HTTP 429` or the network error's message. */
  readonly reason: string;
}

export interface TransportOptions {
  /** Attempts in all for a call that may be retried (default 4). */
  readonly attempts?: number;
  /** The first backoff's ceiling; each retry doubles it, up to maxDelayMs (defaults 250 and 5000). */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** A Retry-After above this is not waited for: the call fails with the server's answer (default 60 s). */
  readonly maxRetryAfterMs?: number;
  /** One attempt's timeout (default 30 s). */
  readonly timeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  readonly onRetry?: (event: RetryEvent) => void;
  /** What the API is called in an unreachable error (default: the request's origin). */
  readonly label?: string;
}

const RETRIED_STATUSES = new Set([429, 503]);

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Retry-After as milliseconds: seconds, or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const reasonOf = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? error.cause.message : error.message;
};

/** Whether a failed attempt may be sent again under the operation's policy. */
function mayRetry(policy: Retry, status: number | undefined): boolean {
  // A 429 was refused before anything was done; every other failure may have done something.
  if (status === 429) return true;
  if (policy === 'never') return false;
  return status === undefined || RETRIED_STATUSES.has(status);
}

export interface Transport {
  /** Sends `request` as the operation with this policy allows; the last answer, or ApiCallError(0) unreachable. */
  send(request: Request, policy: Retry, idempotencyKey?: string): Promise<Response>;
}

export function createTransport(fetchImpl: FetchLike, options: TransportOptions = {}): Transport {
  const attempts = Math.max(1, options.attempts ?? 4);
  const base = options.baseDelayMs ?? 250;
  const max = options.maxDelayMs ?? 5000;
  const maxRetryAfter = options.maxRetryAfterMs ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;

  const backoff = (attempt: number): number => Math.round(random() * Math.min(max, base * 2 ** (attempt - 1)));

  return {
    async send(request, policy, idempotencyKey) {
      const headers = Object.fromEntries(request.headers.entries());
      if (policy === 'keyed') headers[IDEMPOTENCY_KEY_HEADER] ??= idempotencyKey ?? randomUUID();
      // Read once: every attempt sends the same bytes.
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.text();
      for (let attempt = 1; ; attempt++) {
        const init: RequestInit = {
          method: request.method,
          headers,
          signal: AbortSignal.timeout(timeoutMs),
          ...(body === undefined || body === '' ? {} : { body }),
        };
        let response: Response | undefined;
        let failure: unknown;
        try {
          response = await fetchImpl(request.url, init);
        } catch (error) {
          failure = error;
        }
        const last = attempt >= attempts || !mayRetry(policy, response?.status);
        if (response !== undefined && (response.ok || !RETRIED_STATUSES.has(response.status) || last)) return response;
        if (response === undefined && last) {
          const why = reasonOf(failure);
          const where = options.label ?? new URL(request.url).origin;
          throw new ApiCallError(0, UNREACHABLE, `cannot reach the API at ${where}${why ? `: ${why}` : ''}`);
        }
        const asked = retryAfterMs(response?.headers.get('retry-after') ?? null);
        if (asked !== undefined && asked > maxRetryAfter && response !== undefined) return response;
        const delayMs = asked ?? backoff(attempt);
        await response?.body?.cancel().catch(() => undefined);
        options.onRetry?.({
          attempt,
          delayMs,
          reason: response === undefined ? reasonOf(failure) : `HTTP ${response.status}`,
        });
        await sleep(delayMs);
      }
    },
  };
}
