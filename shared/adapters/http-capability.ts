/**
 * A capability bound to an HTTP endpoint: POST the request documented in shared/capabilities/wire.ts as JSON, with
 * an `Idempotency-Key` header (run#step#generation) so endpoints can deduplicate side effects themselves.
 *
 * Answers: a 2xx JSON body is the output, or the `{ output, confidence?, note? }` envelope (wire.ts). Failures:
 * 408, 429, 5xx, timeouts and connection errors are retryable; any other 4xx is permanent; a 2xx body that is not
 * JSON is permanent (E_MALFORMED_ANSWER). The binding is a careful client (shared/adapters/http-exchange.ts):
 * - a 3xx is not followed (E_REDIRECT_REFUSED, permanent) unless the binding allows same-origin redirects; then a 307
 *   or 308 to the same scheme, host and port is followed, at most MAX_REDIRECTS times, with the same method, body and
 *   headers. A 301, 302 or 303 is still refused: followed as fetch does, the POST would become a GET without its body.
 *   Another origin is always refused, so the binding's headers never reach a host it was not configured for;
 * - the answer is read up to the step output limit (CAIRN_MAX_OUTPUT_BYTES) and no further: a larger one, or one
 *   that declares a larger `content-length`, fails E_OUTPUT_TOO_LARGE with the rest unread. A failure's body is read
 *   only as far as its message shows;
 * - unless the binding is marked internal, an endpoint whose host is or resolves to a loopback, private or link-local
 *   address is refused (E_ADDRESS_REFUSED, permanent) at the connection itself (shared/adapters/address-guard.ts).
 */

import { CAPABILITY_ERROR_CODES, capabilityError, httpStatusFailure } from '../capabilities/capability-errors.ts';
import { answerToResult, capabilityRequest, parseAnswerJson } from '../capabilities/wire.ts';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../config/defaults.ts';
import { isCapabilityError } from '../errors.ts';
import type { CapabilityBinding, CapabilityCall, CapabilityResult } from '../ports/capabilities.ts';
import { checkLiteralHost, guardedLookup } from './address-guard.ts';
import { createHttpClient, declaredLength, decodeText, type HttpClient, readBounded } from './http-exchange.ts';

export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
/** How many same-origin redirects a binding that allows them follows in one call. */
export const MAX_REDIRECTS = 3;
/** How much of a failure's body is read: its message shows the first 300 characters. */
const ERROR_BODY_BYTES = 4096;

export type RedirectPolicy = 'none' | 'same-origin';

export interface HttpCapabilityOptions {
  readonly url: string;
  /** The whole exchange, body included; default 30 s. */
  readonly timeoutMs?: number;
  /** The binding's headers, or a reader of them (values named by reference: ./secret-values.ts), read per call. */
  readonly headers?: Readonly<Record<string, string>> | (() => Promise<Readonly<Record<string, string>>>);
  /** 'none' by default; 'same-origin' follows 307 and 308 to the endpoint's own origin. */
  readonly redirects?: RedirectPolicy;
  /** The largest answer body read, in bytes; default the step output limit (DEFAULT_MAX_OUTPUT_BYTES). */
  readonly maxAnswerBytes?: number;
  /** True lets the endpoint be on a loopback, private or link-local address; false (the default) refuses those. */
  readonly internal?: boolean;
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

function transportError(error: unknown, source: string, url: string, timeoutMs: number, timedOut: boolean): Error {
  if (timedOut)
    return capabilityError(CAPABILITY_ERROR_CODES.timeout, `${source} did not answer within ${timeoutMs} ms`, {
      retryable: true,
      cause: error,
      context: { url },
    });
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return capabilityError(
    CAPABILITY_ERROR_CODES.unavailable,
    `${source} could not be reached: ${message}${typeof code === 'string' && !message.includes(code) ? ` (${code})` : ''}`,
    { retryable: true, cause: error, context: { url } },
  );
}

/** Where a redirect points, for messages: its origin only (its path and query may carry what is not ours to show). */
const whereTo = (location: string | undefined, target: URL | undefined): string => {
  if (location === undefined) return 'no Location';
  if (target === undefined) return 'an unreadable Location';
  return target.protocol === 'http:' || target.protocol === 'https:' ? target.origin : `a ${target.protocol} URL`;
};

const resolveLocation = (location: string | undefined, base: URL): URL | undefined => {
  if (location === undefined) return undefined;
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
};

export function httpCapability(options: HttpCapabilityOptions): CapabilityBinding {
  const { url, headers = {} } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const redirects = options.redirects ?? 'none';
  const endpoint = new URL(url);
  const internal = options.internal === true;
  const what = `HTTP endpoint ${url}`;
  const client: HttpClient = createHttpClient(internal ? {} : { lookup: guardedLookup(what) });

  /** The URL a redirect answer leads to, when this binding may follow it; else the refusal. */
  function nextHop(source: string, status: number, location: string | undefined, hop: number): URL {
    const target = resolveLocation(location, endpoint);
    const refuse = (why: string) =>
      capabilityError(
        CAPABILITY_ERROR_CODES.redirectRefused,
        `${source} answered HTTP ${status} redirecting to ${whereTo(location, target)}; ${why}`,
        { retryable: false, details: { status }, context: { url } },
      );
    if (redirects === 'none')
      throw refuse('redirects are not followed (a binding may allow same-origin ones: "redirects": "same-origin")');
    if (status !== 307 && status !== 308)
      throw refuse('only 307 and 308 are followed, as they keep the POST and its body');
    if (target === undefined || target.origin !== endpoint.origin)
      throw refuse('a redirect to another origin is not followed, so the binding’s headers never leave its origin');
    if (hop >= MAX_REDIRECTS) throw refuse(`more than ${MAX_REDIRECTS} redirects`);
    return target;
  }

  function tooLarge(source: string, how: string): Error {
    return capabilityError(
      CAPABILITY_ERROR_CODES.outputTooLarge,
      `${source} ${how}, over the limit of ${maxAnswerBytes} bytes; the rest was not read ` +
        '(step results live in one DynamoDB item and travel in 256 KB Step Functions payloads): ' +
        'return a reference to the data (for example an S3 URL) instead of the data itself',
      { retryable: false, details: { limit: maxAnswerBytes }, context: { url } },
    );
  }

  /** The final answer's status and body, after the redirects this binding may follow. */
  async function exchange(call: CapabilityCall, source: string, signal: AbortSignal) {
    const body = JSON.stringify(capabilityRequest(call));
    const requestHeaders = {
      ...(typeof headers === 'function' ? await headers() : headers),
      'content-type': 'application/json',
      accept: 'application/json',
      'idempotency-key': call.idempotencyKey,
    };
    let target = endpoint;
    for (let hop = 0; ; hop++) {
      // A host written as an IP is connected to without a lookup, so the guard's lookup never sees it.
      if (!internal) checkLiteralHost(what, target.hostname);
      const response = await client.send(target, { method: 'POST', headers: requestHeaders, body, signal });
      const status = response.statusCode ?? 0;
      if (status >= 300 && status <= 399) {
        response.destroy();
        target = nextHop(source, status, response.headers.location, hop);
        continue;
      }
      if (status < 200 || status > 299) {
        const { bytes } = await readBounded(response, ERROR_BODY_BYTES);
        throw statusError(status, decodeText(bytes), source, url);
      }
      const declared = declaredLength(response);
      if (declared !== undefined && declared > maxAnswerBytes) {
        response.destroy();
        throw tooLarge(source, `declared an answer of ${declared} bytes (content-length)`);
      }
      const read = await readBounded(response, maxAnswerBytes);
      if (!read.complete) throw tooLarge(source, `answered more than ${maxAnswerBytes} bytes`);
      return { status, text: decodeText(read.bytes) };
    }
  }

  return {
    kind: 'http',
    async invoke(call: CapabilityCall): Promise<CapabilityResult> {
      const source = `HTTP endpoint ${url} (${call.target})`;
      const timeout = AbortSignal.timeout(timeoutMs);
      // One signal for the request and the body: a server that stalls mid-body times out too. The executor's signal
      // too: a step out of time stops its request rather than leave it running.
      const signal = call.signal === undefined ? timeout : AbortSignal.any([timeout, call.signal]);
      let answer: { status: number; text: string };
      try {
        answer = await exchange(call, source, signal);
      } catch (error) {
        if (isCapabilityError(error)) throw error;
        if (call.signal?.aborted === true)
          throw capabilityError(CAPABILITY_ERROR_CODES.timeout, `${source}: the request was stopped by its step`, {
            retryable: true,
            cause: error,
            context: { url },
          });
        throw transportError(error, source, url, timeoutMs, timeout.aborted);
      }
      return answerToResult(parseAnswerJson(answer.text, source), source, {
        binding: 'http',
        url,
        status: answer.status,
      });
    },
    close: async () => client.close(),
  };
}
