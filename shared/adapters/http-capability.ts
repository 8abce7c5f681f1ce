/**
 * A capability bound to an HTTP endpoint: POST the request documented in shared/capabilities/wire.ts as JSON, with
 * an `Idempotency-Key` header (run#step#generation) so endpoints can deduplicate side effects themselves.
 *
 * Answers: a 2xx JSON body is the output, or the `{ output, confidence?, note? }` envelope (wire.ts). Failures:
 * 408, 429, 5xx, timeouts and connection errors are retryable; any other status (4xx, or 3xx fetch did not follow)
 * is permanent; a 2xx body that is not JSON is permanent (E_MALFORMED_ANSWER).
 */

import { CAPABILITY_ERROR_CODES, capabilityError, httpStatusFailure } from '../capabilities/capability-errors.ts';
import { answerToResult, capabilityRequest, parseAnswerJson } from '../capabilities/wire.ts';
import type { CapabilityBinding, CapabilityCall, CapabilityResult } from '../ports/capabilities.ts';

export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

export interface HttpCapabilityOptions {
  readonly url: string;
  /** The whole exchange, body included; default 30 s. */
  readonly timeoutMs?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** For tests and proxies; the global fetch otherwise. */
  readonly fetch?: typeof fetch;
}

const excerpt = (text: string): string => (text.length > 300 ? `${text.slice(0, 300)}…` : text);

function statusError(status: number, body: string, source: string, url: string): Error {
  const { code, retryable } = httpStatusFailure(status);
  const tail = body.trim().length > 0 ? `: ${excerpt(body.trim())}` : '';
  return capabilityError(code, `${source} answered HTTP ${status}${tail}`, {
    retryable,
    details: { status },
    context: { url },
  });
}

function transportError(error: unknown, source: string, url: string, timeoutMs: number): Error {
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError' || name === 'AbortError')
    return capabilityError(CAPABILITY_ERROR_CODES.timeout, `${source} did not answer within ${timeoutMs} ms`, {
      retryable: true,
      cause: error,
      context: { url },
    });
  // fetch wraps refused/reset connections and DNS failures in a TypeError whose cause says which.
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  const message = error instanceof Error ? error.message : String(error);
  return capabilityError(CAPABILITY_ERROR_CODES.unavailable, `${source} could not be reached: ${message}${cause}`, {
    retryable: true,
    cause: error,
    context: { url },
  });
}

export function httpCapability(options: HttpCapabilityOptions): CapabilityBinding {
  const { url, headers = {} } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const doFetch = options.fetch ?? fetch;
  return {
    kind: 'http',
    async invoke(call: CapabilityCall): Promise<CapabilityResult> {
      const source = `HTTP endpoint ${url} (${call.target})`;
      let status: number;
      let text: string;
      try {
        // One signal for the request and the body: a server that stalls mid-body times out too.
        const response = await doFetch(url, {
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            accept: 'application/json',
            'idempotency-key': call.idempotencyKey,
          },
          body: JSON.stringify(capabilityRequest(call)),
          redirect: 'follow',
          // The executor's signal too: a step out of time stops its request rather than leave it running.
          signal:
            call.signal === undefined
              ? AbortSignal.timeout(timeoutMs)
              : AbortSignal.any([AbortSignal.timeout(timeoutMs), call.signal]),
        });
        status = response.status;
        text = await response.text();
      } catch (error) {
        if (call.signal?.aborted === true)
          throw capabilityError(CAPABILITY_ERROR_CODES.timeout, `${source}: the request was stopped by its step`, {
            retryable: true,
            cause: error,
            context: { url },
          });
        throw transportError(error, source, url, timeoutMs);
      }
      if (status < 200 || status > 299) throw statusError(status, text, source, url);
      const answer = parseAnswerJson(text, source);
      return answerToResult(answer, source, { binding: 'http', url, status });
    },
  };
}
