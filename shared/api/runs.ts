/**
 * Runs: create (from an objective or a submitted plan, idempotent by key), list, read, plan revisions, events,
 * cancel. Creating a run stores it as `planning` and starts the run state machine; everything after that happens
 * in the machine, never in the request. With a bound on a tenant's running runs, the run is stored `queued` instead
 * and handed to admission (shared/services/admission.ts), which starts it (through its decider) when it has a slot.
 *
 * An Idempotency-Key stands for one request: the key's claim records a hash of the body (canonical JSON, so key
 * order is no difference), and the same key with another body is refused (422 E_IDEMPOTENCY_MISMATCH) instead of
 * answered with a run that was asked for with other words.
 */

import { Hono } from 'hono';
import { DEFAULT_TENANT } from '../config/defaults.ts';
import { isConflictError } from '../errors.ts';
import type { RunStatus } from '../plan/schema.ts';
import { resolveMode } from '../planner/planner.ts';
import { runExecutionName } from '../ports/executions.ts';
import type { RunRecord } from '../ports/store.ts';
import { bodyBytes, readOptionalJson, readQuery, revisionQuery } from './body.ts';
import type { Caller } from './caller.ts';
import { askWithin, cancelAnswer, commandIdOf, pendingAnswer } from './commands.ts';
import { serve } from './contract/route.ts';
import { cancelRun, createRun, getRun, getRunPlan, listRunEvents, listRuns } from './contract/routes/runs.ts';
import { cancelBody, eventsQuery, listRunsQuery, MAX_EVENT_PAGE, stepsQuery } from './contract/schemas/requests.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { type ApiDeps, type ApiEnv, modeOf } from './deps.ts';
import { ApiError, notFound } from './errors.ts';
import { conditionalJson } from './etag.ts';
import { DEPLOYED_FEED, longPoll, MAX_WAIT_SECONDS, streamEvents } from './event-feed.ts';
import { gzipJson } from './gzip.ts';
import { submitRequest } from './plan-requests.ts';
import { DEFAULT_STEP_PAGE, readRunPage } from './run-page.ts';
import { findRuns } from './run-search.ts';
import { buildRunSummary } from './run-view.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

const DEFAULT_LIST_LIMIT = 20;
/** The reads a watching page repeats (a run's steps, the runs list) are gzipped when the client takes it. */
const COMPRESSED = { before: [gzipJson(2048)] };

type NewRun = Pick<RunRecord, 'objective' | 'mode' | 'directTarget' | 'submittedPlan' | 'planStamp'>;

export { runRequestHash } from './plan-requests.ts';

const keyMismatch = (): ApiError =>
  new ApiError(
    422,
    'E_IDEMPOTENCY_MISMATCH',
    'this Idempotency-Key was already used for a different request: send a new key for a new request',
  );

export function runsRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const { store } = deps;

  const requireRun = async (runId: string): Promise<RunRecord> => {
    const run = await store.getRun(runId);
    if (!run) throw notFound(`run ${runId} not found`);
    return run;
  };

  /**
   * Stores the run (unless a concurrent request with the same key already did) and starts its machine, or queues it
   * for admission when its tenant's runs are bounded. Who asked is part of the record: its approvals are not theirs
   * to decide (approval-rules.ts).
   */
  const createAndStart = async (
    runId: string,
    fields: NewRun,
    key: string | undefined,
    caller: Caller,
  ): Promise<RunStatus> => {
    const now = deps.clock().toISOString();
    const { admission } = deps;
    const record: RunRecord = {
      runId,
      status: admission?.bounded === true ? 'queued' : 'planning',
      ...fields,
      revision: 0,
      createdAt: now,
      updatedAt: now,
      replans: 0,
      startedBy: caller.subject,
      // The default tenant's runs carry none, as they did before tenants.
      ...(caller.tenant === DEFAULT_TENANT ? {} : { tenant: caller.tenant }),
      ...(key === undefined ? {} : { idempotencyKey: key }),
    };
    let stored = record;
    try {
      await store.createRun(record);
    } catch (error) {
      if (!key || !isConflictError(error)) throw error;
      // A retry of a request that stored the run: it goes on as that run was stored (queued, or to be started).
      stored = (await store.getRun(runId)) ?? record;
    }
    if (stored.status === 'queued' && admission !== undefined) {
      const admitted = await admission.enter(caller.tenant, { runId, createdAt: stored.createdAt });
      return admitted ? 'planning' : 'queued';
    }
    // The name is deterministic: starting twice (a retried request, a crash before the start) starts nothing new.
    await deps.executions.start('run', runExecutionName(runId), { runId });
    return 'planning';
  };

  serve(app, createRun, async (c) => {
    const key = c.req.header(IDEMPOTENCY_HEADER);
    // Decoded, validated, stamped and hashed where the deps say (plan-requests.ts): off the event loop when it
    // serves many. Nothing is stored, no key is claimed, for an invalid plan.
    const submitted = await submitRequest(deps, await bodyBytes(c), key !== undefined);
    if (key !== undefined && !KEY_PATTERN.test(key)) {
      throw new ApiError(400, 'E_BAD_REQUEST', 'Idempotency-Key must be 1..255 visible ASCII characters');
    }
    let fields: NewRun;
    if (submitted.kind === 'plan') {
      fields = {
        objective: submitted.plan.objective,
        mode: 'SUBMITTED',
        submittedPlan: submitted.plan,
        planStamp: submitted.planStamp,
      };
    } else {
      const body = submitted.request;
      const mode = modeOf(body);
      // A mode that cannot plan (DIRECT without a target, an unknown target...) is refused now, not in the machine.
      resolveMode({ ...body, mode }, deps.catalog);
      fields = {
        objective: body.objective,
        mode,
        ...(body.directTarget === undefined ? {} : { directTarget: body.directTarget }),
      };
    }
    let runId = deps.newId();
    if (key !== undefined && submitted.requestHash !== undefined) {
      const { requestHash } = submitted;
      const claim = await store.claimRunKey(c.get('caller').tenant, key, runId, requestHash);
      const owner = claim.runId;
      if (owner !== runId) {
        // A claim from before request hashes were recorded has none, and is taken for the same request.
        if (claim.requestHash !== undefined && claim.requestHash !== requestHash) throw keyMismatch();
        const existing = await store.getRun(owner);
        // Still planning or queued: the first request may have died between storing and starting (or queueing); the
        // start and the queueing are idempotent.
        if (existing && existing.status !== 'planning' && existing.status !== 'queued')
          return c.json({ runId: owner, status: existing.status }, 202);
        runId = owner;
      }
    }
    const status = await createAndStart(runId, fields, key, c.get('caller'));
    return c.json({ runId, status }, 202);
  });

  serve(
    app,
    listRuns,
    async (c) => {
      const query = readQuery(c, listRunsQuery);
      const limit = query.limit ?? DEFAULT_LIST_LIMIT;
      const found = await findRuns(store, {
        tenant: c.get('caller').tenant,
        limit,
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(query.q === undefined ? {} : { text: query.q }),
        ...(query.cursor === undefined ? {} : { before: decodeCursor('runs', query.cursor) }),
      });
      // Each run's steps counted by status, as its last decision left them: a list reads no step. An ended run
      // carries its counts; only the others' heads are read.
      const running = found.runs.filter((run) => run.endCounts === undefined).map((run) => run.runId);
      const counts = running.length === 0 ? new Map() : await store.getStepCounts(running);
      const summaries = found.runs.map((run) => buildRunSummary(run, run.endCounts ?? counts.get(run.runId) ?? {}));
      const wanted = query.status === undefined ? summaries : summaries.filter((s) => s.status === query.status);
      return conditionalJson(c, {
        runs: wanted,
        ...(found.next ? { nextCursor: encodeCursor('runs', found.next) } : {}),
      });
    },
    COMPRESSED,
  );

  serve(
    app,
    getRun,
    async (c) => {
      const query = readQuery(c, stepsQuery);
      const run = await requireRun(c.req.param('runId'));
      const from = query.cursor === undefined ? 0 : decodeCursor('steps', query.cursor).index;
      const page = await readRunPage(store, run, { from, limit: query.limit ?? DEFAULT_STEP_PAGE });
      return conditionalJson(c, {
        ...page.view,
        ...(page.next === undefined ? {} : { nextCursor: encodeCursor('steps', { index: page.next }) }),
      });
    },
    COMPRESSED,
  );

  serve(app, getRunPlan, async (c) => {
    const run = await requireRun(c.req.param('runId'));
    const revision = readQuery(c, revisionQuery).revision ?? run.revision;
    if (revision < 1) throw notFound(`run ${run.runId} has no plan yet (status ${run.status})`);
    const stored = await store.getPlanRevision(run.runId, revision);
    if (!stored) throw notFound(`run ${run.runId} has no plan revision ${revision}`);
    return c.json({ plan: stored.plan, revision, reason: stored.reason });
  });

  serve(
    app,
    listRunEvents,
    async (c) => {
      const query = readQuery(c, eventsQuery);
      const after = query.cursor ?? query.after;
      const limit = query.limit ?? MAX_EVENT_PAGE;
      const run = await requireRun(c.req.param('runId'));
      if (query.follow !== undefined) {
        const feed = deps.eventFeed ?? DEPLOYED_FEED;
        const read = { runId: run.runId, status: run.status, after, limit };
        if (feed.stream && query.wait === undefined) return streamEvents(c, store, read, feed.pollMs);
        const waitMs = (query.wait ?? MAX_WAIT_SECONDS) * 1000;
        const { events, finished } = await longPoll(store, read, { waitMs, pollMs: feed.pollMs });
        const last = events.at(-1);
        return c.json({
          events,
          ...(events.length === limit && last ? { nextCursor: last.seq } : {}),
          ...(finished ? { finished } : {}),
        });
      }
      const events = await store.listEvents(run.runId, { limit, ...(after === undefined ? {} : { after }) });
      const last = events.at(-1);
      return conditionalJson(c, { events, ...(events.length === limit && last ? { nextCursor: last.seq } : {}) });
    },
    COMPRESSED,
  );

  serve(app, cancelRun, async (c) => {
    const run = await requireRun(c.req.param('runId'));
    const body = await readOptionalJson(c, cancelBody);
    // Who asked is part of the record: the JWT `sub`, or `local-token` for the embedded API's static token.
    const requestedBy = c.get('principal');
    const command = { kind: 'CancelRun', compensate: body?.compensate === true, by: requestedBy ?? null } as const;
    // A cancel of a large run may take longer than a request should wait: past the wait, 202 and its status URL.
    const commandId = commandIdOf('cancel', run.runId, deps.newId());
    const reply = await askWithin(deps, run.runId, command, commandId);
    if (reply === 'pending') return pendingAnswer(c, run.runId, commandId);
    return c.json(await cancelAnswer(deps, run.runId, reply), 200);
  });

  return app;
}
