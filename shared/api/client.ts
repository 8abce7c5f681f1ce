/**
 * The typed client of the cairn API (the CLI, scripts and tests use it), generated from the contract: its types are
 * the OpenAPI document's (client/openapi.gen.ts, `npm run openapi`), its requests go through openapi-fetch, and each
 * operation is sent again or not as the contract's `x-cairn-retry` says (client/transport.ts). Every answer that is
 * not 2xx becomes an ApiCallError that keeps the server's code, message and details.
 */
import createClient from 'openapi-fetch';
import { ApiCallError, errorOf, isApiCallError } from './client/errors.ts';
import { type components, OPERATIONS, type paths } from './client/openapi.gen.ts';
import { createTransport, type FetchLike, type TransportOptions } from './client/transport.ts';

export { ApiCallError, describeCallError, isApiCallError, UNREACHABLE } from './client/errors.ts';
export type { FetchLike, RetryEvent, TransportOptions } from './client/transport.ts';

export const DEFAULT_API_URL = 'http://127.0.0.1:3000';

type Schemas = components['schemas'];
export type RunStatus = Schemas['RunStatus'];
export type RunView = Schemas['RunView'];
export type StepView = Schemas['StepView'];
export type RunSummary = Schemas['RunSummary'];
export type RunPage = Schemas['RunPage'];
export type RunEvent = Schemas['RunEvent'];
export type EventPage = Schemas['EventPage'];
export type ApprovalView = Schemas['Approval'];
export type StepDetail = Schemas['StepDetail'];
export type PlanJob = Schemas['PlanJob'];
export type Plan = Schemas['Plan'];
type Json<Body> = Body extends { readonly content: { readonly 'application/json': infer T } } ? T : never;
export type CreateRunBody = Json<paths['/runs']['post']['requestBody']>;
export type Decision = Json<paths['/approvals/{id}']['post']['requestBody']>;
export type CompensationAction = Json<paths['/runs/{runId}/steps/{stepId}/compensation']['post']['requestBody']>;
export type PlanRequest = Json<paths['/plans']['post']['requestBody']>;
export type ValidateRequest = Json<paths['/plans/validate']['post']['requestBody']>;
export type WebhookHeaders = paths['/webhooks/{source}']['post']['parameters']['header'];
type WebhookBody = Json<paths['/webhooks/{source}']['post']['requestBody']>;
export type Operation = keyof typeof OPERATIONS;

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

export interface ApiClient {
  createRun(body: CreateRunBody, options?: { idempotencyKey?: string }): Promise<Schemas['RunCreated']>;
  /** One page of runs (newest first); listRunsPage gives its cursor too. */
  listRuns(query?: { status?: RunStatus; limit?: number }): Promise<readonly RunSummary[]>;
  listRunsPage(query?: { status?: RunStatus; limit?: number; cursor?: string }): Promise<RunPage>;
  /** One page of a run's steps (100 by default); getWholeRun reads them all. */
  getRun(runId: string, query?: { limit?: number; cursor?: string }): Promise<RunView>;
  /** A run with every step: its pages read in turn (again from the first, once, if a revision lands meanwhile). */
  getWholeRun(runId: string): Promise<RunView>;
  getRunPlan(runId: string, revision?: number): Promise<Schemas['PlanRevision']>;
  /** A page of the run's audit log; `follow` with `wait` (seconds) waits for events after `after` (a long poll). */
  listRunEvents(
    runId: string,
    query?: { after?: string; limit?: number; follow?: '1'; wait?: number },
  ): Promise<EventPage>;
  /** Cancels, and waits for the decision when the API answered 202 (a large run): the decided run. */
  cancelRun(runId: string, options?: { compensate?: boolean }): Promise<Schemas['RunCancelled']>;
  /** A cancel's or an invalidation's decision after a 202: pending, or the request's own answer. */
  getRunCommand(
    runId: string,
    commandId: string,
  ): Promise<Schemas['RunCancelled'] | Schemas['Invalidated'] | Schemas['CommandPending']>;
  getStep(runId: string, stepId: string): Promise<StepDetail>;
  listRevisions(runId: string): Promise<Schemas['Revisions']>;
  getRevisionDiff(runId: string, revision: number, against?: number): Promise<Schemas['RevisionDiff']>;
  getPlanDiff(runId: string, query?: { from?: number; to?: number }): Promise<Schemas['RevisionDiff']>;
  getTimeline(runId: string): Promise<Schemas['Timeline']>;
  /**
   * Starts a new generation of a step (a group: its descendants) and of everything downstream of it; waits for the
   * decision when the API answered 202 with a pending command.
   */
  invalidate(runId: string, stepId: string, reason?: string): Promise<Schemas['Invalidated']>;
  actOnCompensation(runId: string, stepId: string, action: CompensationAction): Promise<Schemas['CompensationActed']>;
  /** Raises the limits of a run paused for its budget or its replan limit; it goes on where it paused. */
  raiseBudget(
    runId: string,
    limits: { maxTokens?: number; maxCostUsd?: number; maxSeconds?: number; maxReplans?: number },
  ): Promise<Schemas['LimitsRaised']>;
  /**
   * Asks for a person's replan (a new objective optional) and waits for its planning job: `revision` is absent when
   * a concurrent replan made it first, `approvalId` present when the revision waits for approval.
   */
  replan(
    runId: string,
    reason: string,
    objective?: string,
  ): Promise<{ runId: string; revision?: number; approvalId?: string }>;
  createPlan(body: PlanRequest): Promise<Schemas['PlanAnswer'] | PlanJob>;
  getPlanJob(jobId: string): Promise<PlanJob>;
  /** `{ valid: true }`; an invalid plan is an ApiCallError 422 whose body has the issues. */
  validatePlan(body: ValidateRequest): Promise<Schemas['Valid']>;
  /** Every approval asked for (the queue's pages followed). */
  listApprovals(query?: { status?: ApprovalView['status']; runId?: string }): Promise<ApprovalView[]>;
  getApproval(approvalId: string): Promise<ApprovalView>;
  decide(approvalId: string, decision: Decision): Promise<ApprovalView>;
  checkApprovalOutput(approvalId: string, output: unknown): Promise<Schemas['OutputCheck']>;
  /** A signed delivery: `body` exactly as signed, with the signature headers (`cairn webhook sign`). */
  sendWebhook(source: string, body: string, headers: WebhookHeaders): Promise<Schemas['WebhookAccepted']>;
  health(): Promise<{ readonly ok: true }>;
  openApi(): Promise<Readonly<Record<string, unknown>>>;
  conformanceLedger(): Promise<{ readonly entries: readonly unknown[] }>;
}

const JOB_POLL_MS = 250;
/** How long the client follows a pending cancel or invalidation before it says it is still being decided. */
const COMMAND_WAIT_MS = 5 * 60_000;

type Pending = Schemas['CommandPending'];
const isPending = (answer: object): answer is Pending => (answer as { decision?: unknown }).decision === 'pending';
/** How long the client waits for a planning job before it says it is still running. */
const JOB_WAIT_MS = 10 * 60_000;

/** Query values as the routes read them: absent ones left out, the rest as text (URLSearchParams encoding). */
function querySerializer(query: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
  return search.toString();
}

interface Outcome<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

/** The answer's data, or the ApiCallError it makes. */
async function answer<T>(call: Promise<Outcome<T>>): Promise<NonNullable<T>> {
  let outcome: Outcome<T>;
  try {
    outcome = await call;
  } catch (error) {
    if (isApiCallError(error)) throw error;
    // The answer said 2xx but was not JSON: a proxy's page, a truncated body.
    throw new ApiCallError(502, 'E_BAD_ANSWER', `the API's answer could not be read: ${(error as Error).message}`);
  }
  if (!outcome.response.ok) throw errorOf(outcome.response.status, outcome.error);
  return outcome.data as NonNullable<T>;
}

/** Pages of a run's steps read in one whole read; more means the plan kept changing under the reader. */
const MAX_RUN_PAGES = 100;

export function createApiClient(
  connection: Connection,
  fetchImpl: FetchLike = fetch,
  options: TransportOptions = {},
): ApiClient {
  const transport = createTransport(fetchImpl, { label: connection.baseUrl, ...options });
  const api = createClient<paths>({
    baseUrl: connection.baseUrl,
    headers: { accept: 'application/json', authorization: `Bearer ${connection.token}` },
    querySerializer,
  });
  /** The fetch of one logical call of `operation`: its retries and, when keyed, its Idempotency-Key. */
  const via = (operation: Operation, idempotencyKey?: string) => (request: Request) =>
    transport.send(request, OPERATIONS[operation].retry, idempotencyKey);
  const run = (runId: string) => ({ path: { runId } });
  const step = (runId: string, stepId: string) => ({ path: { runId, stepId } });

  /** A pending command followed at its status URL until the run's decider answered it (the answer, or its refusal). */
  const decided = async (pending: Pending): Promise<object> => {
    const deadline = Date.now() + COMMAND_WAIT_MS;
    let now: object = pending;
    while (isPending(now) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
      now = await client.getRunCommand(pending.runId, pending.commandId);
    }
    if (isPending(now))
      throw new ApiCallError(504, 'E_DECISION_PENDING', `command ${pending.commandId} is still being decided`);
    return now;
  };
  const client: ApiClient = {
    createRun: (body, o = {}) => answer(api.POST('/runs', { body, fetch: via('createRun', o.idempotencyKey) })),
    listRuns: async (query = {}) => (await client.listRunsPage(query)).runs,
    listRunsPage: (query = {}) => answer(api.GET('/runs', { params: { query }, fetch: via('listRuns') })),
    getRun: (runId, query = {}) =>
      answer(api.GET('/runs/{runId}', { params: { ...run(runId), query }, fetch: via('getRun') })),
    async getWholeRun(runId) {
      for (let tries = 0; ; tries++) {
        const first = await client.getRun(runId);
        const steps = [...first.steps];
        let cursor = first.nextCursor;
        let moved = false;
        for (let pages = 1; cursor !== undefined && pages < MAX_RUN_PAGES; pages++) {
          const page = await client.getRun(runId, { cursor });
          moved = page.revision !== first.revision;
          if (moved) break;
          steps.push(...page.steps);
          cursor = page.nextCursor;
        }
        if (!moved || tries > 0) {
          const { nextCursor: _read, ...run } = first;
          return { ...run, steps };
        }
      }
    },
    getRunPlan: (runId, revision) =>
      answer(
        api.GET('/runs/{runId}/plan', {
          params: { ...run(runId), query: revision === undefined ? {} : { revision } },
          fetch: via('getRunPlan'),
        }),
      ),
    listRunEvents: (runId, query = {}) =>
      answer(api.GET('/runs/{runId}/events', { params: { ...run(runId), query }, fetch: via('listRunEvents') })),
    cancelRun: async (runId, o = {}) => {
      const first = await answer(
        api.POST('/runs/{runId}/cancel', {
          params: run(runId),
          ...(o.compensate === undefined ? {} : { body: { compensate: o.compensate } }),
          fetch: via('cancelRun'),
        }),
      );
      return (isPending(first) ? await decided(first) : first) as Schemas['RunCancelled'];
    },
    getRunCommand: (runId, commandId) =>
      answer(
        api.GET('/runs/{runId}/commands/{commandId}', {
          params: { path: { runId, commandId } },
          fetch: via('getRunCommand'),
        }),
      ),
    getStep: (runId, stepId) =>
      answer(api.GET('/runs/{runId}/steps/{stepId}', { params: step(runId, stepId), fetch: via('getStep') })),
    listRevisions: (runId) =>
      answer(api.GET('/runs/{runId}/revisions', { params: run(runId), fetch: via('listRevisions') })),
    getRevisionDiff: (runId, revision, against) =>
      answer(
        api.GET('/runs/{runId}/revisions/{revision}/diff', {
          params: { path: { runId, revision: String(revision) }, query: against === undefined ? {} : { against } },
          fetch: via('getRevisionDiff'),
        }),
      ),
    getPlanDiff: (runId, query = {}) =>
      answer(api.GET('/runs/{runId}/plan/diff', { params: { ...run(runId), query }, fetch: via('getPlanDiff') })),
    getTimeline: (runId) =>
      answer(api.GET('/runs/{runId}/timeline', { params: run(runId), fetch: via('getTimeline') })),
    invalidate: async (runId, stepId, reason) => {
      const first = await answer(
        api.POST('/runs/{runId}/steps/{stepId}/invalidate', {
          params: step(runId, stepId),
          body: reason === undefined ? {} : { reason },
          fetch: via('invalidateStep'),
        }),
      );
      return (isPending(first) ? await decided(first) : first) as Schemas['Invalidated'];
    },
    actOnCompensation: (runId, stepId, action) =>
      answer(
        api.POST('/runs/{runId}/steps/{stepId}/compensation', {
          params: step(runId, stepId),
          body: action,
          fetch: via('actOnCompensation'),
        }),
      ),
    raiseBudget: (runId, limits) =>
      answer(api.POST('/runs/{runId}/budget', { params: run(runId), body: limits, fetch: via('raiseBudget') })),
    replan: async (runId, reason, objective) => {
      // The replan is a planning job (202): polled until its worker has recorded the revision or the refusal.
      const body = objective === undefined ? { reason } : { reason, objective };
      let job = await answer(api.POST('/runs/{runId}/replan', { params: run(runId), body, fetch: via('replanRun') }));
      const deadline = Date.now() + JOB_WAIT_MS;
      while (job.status === 'pending' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
        job = await client.getPlanJob(job.jobId);
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
    createPlan: (body) => answer(api.POST('/plans', { body, fetch: via('createPlan') })),
    getPlanJob: (jobId) => answer(api.GET('/plans/{jobId}', { params: { path: { jobId } }, fetch: via('getPlanJob') })),
    validatePlan: (body) => answer(api.POST('/plans/validate', { body, fetch: via('validatePlan') })),
    listApprovals: async (query = {}) => {
      // The queue comes in pages: follow them, so a caller sees every approval it asked for.
      const approvals: ApprovalView[] = [];
      let cursor: string | undefined;
      do {
        const page = await answer(
          api.GET('/approvals', {
            params: { query: cursor === undefined ? query : { ...query, cursor } },
            fetch: via('listApprovals'),
          }),
        );
        approvals.push(...page.approvals);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return approvals;
    },
    getApproval: async (id) =>
      (await answer(api.GET('/approvals/{id}', { params: { path: { id } }, fetch: via('getApproval') }))).approval,
    decide: async (id, decision) =>
      (
        await answer(
          api.POST('/approvals/{id}', { params: { path: { id } }, body: decision, fetch: via('decideApproval') }),
        )
      ).approval,
    checkApprovalOutput: (id, output) =>
      answer(
        api.POST('/approvals/{id}/check', {
          params: { path: { id } },
          body: { output },
          fetch: via('checkApprovalOutput'),
        }),
      ),
    sendWebhook: (source, body, headers) =>
      answer(
        api.POST('/webhooks/{source}', {
          params: { path: { source }, header: headers },
          // The signature is over these exact bytes: they go out as given (bodySerializer), never re-serialized,
          // so the text stands where openapi-fetch expects the body's value.
          body: body as unknown as WebhookBody,
          bodySerializer: () => body,
          fetch: via('receiveWebhook'),
        }),
      ),
    health: () => answer(api.GET('/health', { fetch: via('health') })),
    openApi: () => answer(api.GET('/openapi.json', { fetch: via('getOpenApi') })),
    conformanceLedger: () => answer(api.GET('/conformance/ledger', { fetch: via('conformanceLedger') })),
  };
  return client;
}
