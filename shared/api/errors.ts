/**
 * Every failure the API answers is JSON `{ error: { code, message, details? } }`. Client errors keep their message
 * (it is about the request); anything unexpected becomes a 500 with a generic message: no stack trace, no internals.
 */

import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import type { Reply } from '../engine/run/decision.ts';
import {
  CairnError,
  type CairnErrorOptions,
  isAdmissionConflictError,
  isCairnError,
  isCatalogError,
  isConflictError,
  isModelError,
  isNotFoundError,
  isPayloadTooLargeError,
  isPlannerError,
  isTransientPlatformError,
  isValidationError,
} from '../errors.ts';
import { clipMessage, MAX_ISSUE_CHARS, MAX_LISTED_ISSUES, moreItems } from '../plan/bounded-text.ts';
import { isWebhookRejectedError, isWebhookSecretError } from '../webhooks/errors.ts';

export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly details?: unknown };
}

/** An error that already knows its HTTP answer (401, 400, 410...). */
export class ApiError extends CairnError {
  readonly status: ContentfulStatusCode;
  readonly code: string;
  readonly details: unknown;
  /** Extra top-level fields of the answer, beside `error` (e.g. `valid: false, errors` for an invalid plan). */
  readonly extra: Readonly<Record<string, unknown>>;
  /** When the client may try again (the answer's Retry-After): the server was busy, the request was fine. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    status: ContentfulStatusCode,
    code: string,
    message: string,
    options: CairnErrorOptions & {
      details?: unknown;
      extra?: Readonly<Record<string, unknown>>;
      retryAfterSeconds?: number;
    } = {},
  ) {
    super('ApiError', message, { ...options, retryable: options.retryAfterSeconds !== undefined });
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.extra = options.extra ?? {};
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export const isApiError = (e: unknown): e is ApiError =>
  isCairnError(e) && e.name === 'ApiError' && typeof (e as { status?: unknown }).status === 'number';

export const errorBody = (code: string, message: string, details?: unknown): ErrorBody => ({
  error: details === undefined ? { code, message } : { code, message, details },
});

export const unauthorized = (message = 'missing or invalid bearer token'): ApiError =>
  new ApiError(401, 'E_UNAUTHORIZED', message);
export const notFound = (message: string): ApiError => new ApiError(404, 'E_NOT_FOUND', message);

/**
 * A request body (or query) that zod rejected: 400 with one `{ path, message }` per problem, bounded as every list
 * of issues is (plan/bounded-text.ts): the first 100, each clipped, then `{ path: '', message: 'and N more' }`.
 */
export function badRequest(error: z.ZodError, where = 'body'): ApiError {
  const { issues } = error;
  const details = issues.slice(0, MAX_LISTED_ISSUES).map((i) => ({
    path: clipMessage(i.path.map((p) => `/${String(p)}`).join(''), MAX_ISSUE_CHARS),
    message: clipMessage(i.message, MAX_ISSUE_CHARS),
  }));
  if (issues.length > MAX_LISTED_ISSUES)
    details.push({ path: '', message: moreItems(issues.length - MAX_LISTED_ISSUES) });
  return new ApiError(400, 'E_BAD_REQUEST', `invalid request ${where}`, { details });
}

// Planner errors carry the plan issues (E_INVALID_PLAN) or the reasons a catalog/method failed.
const detailsOf = (error: CairnError): unknown => {
  const { issues, reasons } = error.context;
  if (Array.isArray(issues)) return issues;
  return Array.isArray(reasons) ? reasons : undefined;
};

interface Mapped {
  readonly status: ContentfulStatusCode;
  readonly body: Record<string, unknown>;
}

/** Maps any thrown value to a status and a JSON body; `unexpected` is true for the ones that deserve a log line. */
export function mapError(error: unknown): Mapped & { unexpected: boolean } {
  if (isApiError(error)) {
    return {
      status: error.status,
      body: { ...errorBody(error.code, error.message, error.details), ...error.extra },
      unexpected: false,
    };
  }
  if (isValidationError(error)) {
    return { status: 422, body: { ...errorBody('E_VALIDATION', error.message, error.errors) }, unexpected: false };
  }
  if (isNotFoundError(error))
    return { status: 404, body: { ...errorBody('E_NOT_FOUND', error.message) }, unexpected: false };
  if (isConflictError(error))
    return { status: 409, body: { ...errorBody('E_CONFLICT', error.message) }, unexpected: false };
  if (isPlannerError(error)) {
    const code = typeof error.context.code === 'string' ? error.context.code : 'E_PLANNER';
    return { status: 422, body: { ...errorBody(code, error.message, detailsOf(error)) }, unexpected: false };
  }
  if (isModelError(error)) {
    // The model provider failed, not the client: a gateway error, with the provider's words kept out.
    return {
      status: error.retryable ? 503 : 502,
      body: { ...errorBody('E_MODEL', 'the planning model failed') },
      unexpected: true,
    };
  }
  if (isPayloadTooLargeError(error)) {
    // Whatever the request carried was too large to keep: the client's to shrink, never a 500.
    return { status: 413, body: { ...errorBody('E_TOO_LARGE', error.message) }, unexpected: false };
  }
  if (isWebhookRejectedError(error)) {
    // Whatever the reason (its code is for the logs), a sender is told only that the signature is not valid.
    return { status: 401, body: { ...errorBody('E_UNAUTHORIZED', 'invalid signature') }, unexpected: false };
  }
  if (isWebhookSecretError(error) && error.retryable) {
    const message = 'the signing secret could not be read; send the delivery again';
    return { status: 503, body: { ...errorBody('E_UNAVAILABLE', message) }, unexpected: true };
  }
  if (isAdmissionConflictError(error)) {
    // Runs of the tenant were queued or ended all at once, past the writer's tries: nothing was lost, try again.
    const message = 'too many runs of this tenant changed at once; send the request again';
    return { status: 503, body: { ...errorBody('E_UNAVAILABLE', message) }, unexpected: false };
  }
  if (isTransientPlatformError(error)) {
    const message = 'a service this API depends on is busy or did not answer in time; send the request again';
    return { status: 503, body: { ...errorBody('E_UNAVAILABLE', message) }, unexpected: false };
  }
  if (isCatalogError(error)) {
    return { status: 500, body: { ...errorBody('E_INTERNAL', 'internal error') }, unexpected: true };
  }
  return { status: 500, body: { ...errorBody('E_INTERNAL', 'internal error') }, unexpected: true };
}

/** Hono's onError: logs the unexpected ones on the server side only. */
export function handleError(error: unknown, c: Context): Response {
  const mapped = mapError(error);
  if (isApiError(error) && error.retryAfterSeconds !== undefined)
    c.header('Retry-After', String(error.retryAfterSeconds));
  if (mapped.unexpected) console.error('cairn api: unexpected error', error);
  return c.json(mapped.body, mapped.status);
}

export const handleNotFound = (c: Context): Response =>
  c.json(errorBody('E_NOT_FOUND', `no route for ${c.req.method} ${c.req.path}`), 404);

/** A run decider's answer as the API passes it on: its value, or its refusal as the coded error it names. */
export function answered(reply: Reply): Readonly<Record<string, unknown>> {
  if (!reply.ok) throw new ApiError(reply.status, reply.code, reply.message, reply.details);
  return reply.value ?? {};
}
