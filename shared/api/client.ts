/**
 * A small HTTP client for the cairn API (the CLI and scripts use it): bearer token, JSON in and out, and every
 * non-2xx answer turned into an ApiCallError that keeps the server's code, message and details.
 */
import { CairnError } from '../errors.ts';
import type { ApprovalView } from './approvals.ts';
import type { RunSummary, RunView } from './run-view.ts';

export const DEFAULT_API_URL = 'http://127.0.0.1:3000';
const REQUEST_TIMEOUT_MS = 30_000;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface Connection {
  readonly baseUrl: string;
  readonly token: string;
}

/** Where to find the API and how to authenticate; missing pieces are a configuration problem, not a request. */
export class ClientConfigError extends Error {
  override readonly name = 'ClientConfigError';
}

/** `--api` / CAIRN_API_URL (default: the local stack) and `--token` / CAIRN_API_TOKEN. */
export function connectionOf(
  flags: { readonly api?: string | undefined; readonly token?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): Connection {
  const raw = flags.api ?? (env.CAIRN_API_URL || DEFAULT_API_URL);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ClientConfigError(`--api must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ClientConfigError(`--api must be an http(s) URL, got "${raw}"`);
  }
  const token = flags.token ?? env.CAIRN_API_TOKEN;
  if (!token) throw new ClientConfigError('no API token: pass --token <token> or set CAIRN_API_TOKEN');
  return { baseUrl: url.toString().replace(/\/+$/, ''), token };
}

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

export interface Decision {
  readonly decision: 'approve' | 'reject' | 'edit';
  readonly output?: unknown;
  readonly comment?: string;
}

export type CreateRunBody =
  | { readonly objective: string; readonly mode?: 'DIRECT' | 'DECOMPOSE'; readonly directTarget?: string }
  | { readonly plan: unknown };

export interface ApiClient {
  createRun(body: CreateRunBody, options?: { idempotencyKey?: string }): Promise<{ runId: string; status: string }>;
  getRun(runId: string): Promise<RunView>;
  listRuns(query?: { status?: string; limit?: number }): Promise<RunSummary[]>;
  cancelRun(runId: string): Promise<{ runId: string; status: string }>;
  listApprovals(query?: { status?: string; runId?: string }): Promise<ApprovalView[]>;
  getApproval(approvalId: string): Promise<ApprovalView>;
  decide(approvalId: string, decision: Decision): Promise<ApprovalView>;
  /**
   * Asks for a person's replan (a new objective optional); `revision` is absent when a concurrent replan made it
   * first, `approvalId` present when the revision waits for approval (it adds a mutating target).
   */
  replan(
    runId: string,
    reason: string,
    objective?: string,
  ): Promise<{ runId: string; revision?: number; approvalId?: string }>;
  /** Starts a new generation of a step (a group: its descendants) and of everything downstream of it. */
  invalidate(
    runId: string,
    stepId: string,
    reason?: string,
  ): Promise<{ runId: string; stepIds: string[]; reopened: boolean }>;
}

/** A planning job as `POST /runs/{id}/replan` and `GET /plans/{jobId}` answer it (plans.ts planJobView). */
interface PlanJobAnswer {
  readonly jobId: string;
  readonly status: 'pending' | 'succeeded' | 'failed';
  readonly revision?: number;
  readonly approvalId?: string;
  readonly error?: { readonly code: string; readonly message: string };
}
const JOB_POLL_MS = 250;
/** How long the client waits for a planning job before it says it is still running. */
const JOB_WAIT_MS = 10 * 60_000;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function errorOf(status: number, body: unknown, text: string): ApiCallError {
  const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const code = typeof error?.code === 'string' ? error.code : `HTTP_${status}`;
  const message =
    typeof error?.message === 'string' ? error.message : text.trim().slice(0, 200) || `the API answered ${status}`;
  return new ApiCallError(status, code, message, error?.details, body);
}

const query = (params: Record<string, string | number | undefined>): string => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined) search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};

export function createApiClient(connection: Connection, fetchImpl: FetchLike = fetch): ApiClient {
  const call = async <T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const init: RequestInit = {
      method,
      headers: {
        accept: 'application/json',
        authorization: `Bearer ${connection.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    };
    let response: Response;
    try {
      response = await fetchImpl(`${connection.baseUrl}${path}`, init);
    } catch (error) {
      const why = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : '';
      throw new ApiCallError(
        0,
        'E_UNREACHABLE',
        `cannot reach the API at ${connection.baseUrl}${why ? `: ${why}` : ''}`,
      );
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!response.ok) throw errorOf(response.status, json, text);
    return json as T;
  };
  const id = encodeURIComponent;
  return {
    createRun: (body, options = {}) =>
      call('POST', '/runs', body, options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}),
    getRun: (runId) => call('GET', `/runs/${id(runId)}`),
    listRuns: async (q = {}) => (await call<{ runs: RunSummary[] }>('GET', `/runs${query(q)}`)).runs,
    cancelRun: (runId) => call('POST', `/runs/${id(runId)}/cancel`),
    listApprovals: async (q = {}) => {
      // The queue comes in pages: follow them, so a caller sees every approval it asked for.
      const approvals: ApprovalView[] = [];
      let cursor: string | undefined;
      do {
        const page = await call<{ approvals: ApprovalView[]; nextCursor?: string }>(
          'GET',
          `/approvals${query(cursor === undefined ? q : { ...q, cursor })}`,
        );
        approvals.push(...page.approvals);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return approvals;
    },
    getApproval: async (approvalId) =>
      (await call<{ approval: ApprovalView }>('GET', `/approvals/${id(approvalId)}`)).approval,
    decide: async (approvalId, decision) =>
      (await call<{ approval: ApprovalView }>('POST', `/approvals/${id(approvalId)}`, decision)).approval,
    replan: async (runId, reason, objective) => {
      // The replan is a planning job (202): polled until its worker has recorded the revision or the refusal.
      const body = objective === undefined ? { reason } : { reason, objective };
      let job = await call<PlanJobAnswer>('POST', `/runs/${id(runId)}/replan`, body);
      const deadline = Date.now() + JOB_WAIT_MS;
      while (job.status === 'pending' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
        job = await call<PlanJobAnswer>('GET', `/plans/${id(job.jobId)}`);
      }
      if (job.status === 'pending')
        throw new ApiCallError(504, 'E_PLAN_JOB_PENDING', `the replan job ${job.jobId} is still running`);
      if (job.status === 'failed')
        throw new ApiCallError(422, job.error?.code ?? 'E_PLANNER', job.error?.message ?? 'the replan failed');
      return {
        runId,
        ...(job.revision === undefined ? {} : { revision: job.revision }),
        ...(job.approvalId === undefined ? {} : { approvalId: job.approvalId }),
      };
    },
    invalidate: (runId, stepId, reason) =>
      call('POST', `/runs/${id(runId)}/steps/${id(stepId)}/invalidate`, reason === undefined ? {} : { reason }),
  };
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
