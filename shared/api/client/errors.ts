/**
 * What a failed call looks like to a client of the API: the server's code, message and details kept, and the status
 * (0 when the API could not be reached at all), with the lines a person reads about it.
 */
import { CairnError } from '../../errors.ts';

/** A request the API refused (status 4xx/5xx) or could not be sent at all (status 0). */
export class ApiCallError extends CairnError {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  /** The whole JSON answer (e.g. `errors` of an invalid plan), when there was one. */
  readonly body: unknown;

  constructor(status: number, code: string, message: string, details?: unknown, body?: unknown) {
    super('ApiCallError', message, { retryable: status === 0 || status >= 500, context: { status, code } });
    this.status = status;
    this.code = code;
    this.details = details;
    this.body = body;
  }
}

export const isApiCallError = (e: unknown): e is ApiCallError =>
  e instanceof Error && e.name === 'ApiCallError' && typeof (e as { status?: unknown }).status === 'number';

export const UNREACHABLE = 'E_UNREACHABLE';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The error for an answer that is not 2xx: the coded body when there is one, else the status and some text. */
export function errorOf(status: number, body: unknown): ApiCallError {
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const code = typeof error?.code === 'string' ? error.code : `HTTP_${status}`;
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : '';
  const message = typeof error?.message === 'string' ? error.message : text || `the API answered ${status}`;
  return new ApiCallError(status, code, message, error?.details, body);
}

/** Human-readable lines for a failed call: the code and message, then one line per detail (plan issues included). */
export function describeCallError(error: ApiCallError): string[] {
  const lines = [`${error.code}: ${error.message}${error.status === 401 ? ' (check --token / CAIRN_API_TOKEN)' : ''}`];
  const body = isRecord(error.body) ? error.body : {};
  const items = Array.isArray(body.errors) ? body.errors : Array.isArray(error.details) ? error.details : [];
  for (const item of items) {
    if (isRecord(item)) {
      const where = typeof item.path === 'string' ? item.path || '(root)' : '';
      lines.push(`  ${[item.code, where, item.message].filter((x) => typeof x === 'string' && x !== '').join(' ')}`);
    } else lines.push(`  ${String(item)}`);
  }
  return lines;
}
