/** The run routes (runs.ts serves them): start, list, read, its plan, its audit log, cancel. */

import { z } from 'zod';
import { revisionQuery } from '../../body.ts';
import { conditionalHeaders, ETAG_HEADER, NOT_MODIFIED } from '../../etag.ts';
import { defineRoute } from '../route.ts';
import { CommandPending, Invalidated, RunCancelled } from '../schemas/approvals.ts';
import { commandParams, ErrorBody, idempotencyHeaders, runParams } from '../schemas/common.ts';
import { cancelBody, createRunBody, eventsQuery, listRunsQuery, stepsQuery } from '../schemas/requests.ts';
import { EventPage, PlanRevision, RunCreated, RunPage, RunView } from '../schemas/runs.ts';

/** A cancel or an invalidation whose decision has not come back within the API's wait. */
export const PENDING_COMMAND = {
  description: 'The decision is still to come: read it at the Location (GET /runs/{runId}/commands/{commandId}).',
  schema: CommandPending,
  headers: { Location: { description: "Where the command's decision is read." } },
} as const;

export const createRun = defineRoute({
  operationId: 'createRun',
  method: 'post',
  path: '/runs',
  tag: 'runs',
  summary: 'Start a run from an objective or a plan',
  description:
    'Stores the run as `planning` and starts it; everything after that happens in the run machine. A plan is ' +
    'validated as untrusted first (422 E_INVALID_PLAN, nothing stored). The same Idempotency-Key with the same body ' +
    '(key order aside) answers its first run; with another body, 422 E_IDEMPOTENCY_MISMATCH.',
  retry: 'keyed',
  headers: idempotencyHeaders,
  body: {
    schema: createRunBody,
    required: true,
    example: { objective: 'say hello', mode: 'DIRECT', directTarget: 'tool:echo' },
  },
  responses: {
    202: { description: 'Accepted: the run is stored and started.', schema: RunCreated },
    422: {
      description:
        'An invalid plan (E_INVALID_PLAN with `valid: false, errors`), a mode that cannot plan, or ' +
        'E_IDEMPOTENCY_MISMATCH.',
      schema: ErrorBody,
    },
  },
});

export const listRuns = defineRoute({
  operationId: 'listRuns',
  method: 'get',
  path: '/runs',
  tag: 'runs',
  summary: 'List runs, newest first',
  description:
    'Pages of up to `limit` (default 20, at most 100); follow `nextCursor` (as `cursor`) until it is absent. ' +
    'Answered with a weak ETag: the same request with it as If-None-Match is answered 304 while nothing changed.',
  query: listRunsQuery,
  headers: conditionalHeaders,
  responses: {
    200: { description: 'A page of runs.', schema: RunPage, headers: ETAG_HEADER },
    304: NOT_MODIFIED,
  },
});

export const getRun = defineRoute({
  operationId: 'getRun',
  method: 'get',
  path: '/runs/{runId}',
  tag: 'runs',
  summary: 'Read a run and its steps',
  description:
    'Steps come in plan order, 100 a page by default (`limit`), and a page stops before 1 MB of JSON: follow ' +
    '`nextCursor` (as `cursor`) until it is absent. Only the steps of the page are read. Outputs over 16 KB and all ' +
    'but the newest 20 trace entries are left out (`outputOmitted`, `traceOmitted`): GET /runs/{runId}/steps/{stepId} ' +
    'shows a step whole. Each page has a weak ETag: sent back as If-None-Match, it is answered 304 while nothing the ' +
    'page shows changed.',
  params: runParams,
  query: stepsQuery,
  headers: conditionalHeaders,
  responses: {
    200: { description: 'The run.', schema: RunView, headers: ETAG_HEADER },
    304: NOT_MODIFIED,
  },
});

export const getRunPlan = defineRoute({
  operationId: 'getRunPlan',
  method: 'get',
  path: '/runs/{runId}/plan',
  tag: 'runs',
  summary: "Read the run's plan (the current revision, or `revision`)",
  params: runParams,
  query: revisionQuery,
  responses: { 200: { description: 'The plan revision and why it was made.', schema: PlanRevision } },
});

export const listRunEvents = defineRoute({
  operationId: 'listRunEvents',
  method: 'get',
  path: '/runs/{runId}/events',
  tag: 'runs',
  summary: "Read the run's audit log",
  description:
    'Oldest first, up to 1000 a page; `after` (the last seq read) returns only what is new: seqs grow with the ' +
    "run's decisions, so nothing recorded later sorts before a seq already read. Answered with a weak ETag (304 " +
    'while nothing changed). `follow=1` follows the run: on the embedded server, a stream of server-sent events ' +
    '(`text/event-stream`: `id` the seq, `event` the type, `data` the event as listed here) until RunFinished; ' +
    'deployed, or with `wait=<seconds>`, a long poll answered as soon as events follow `after`, or after `wait` ' +
    '(20 s by default and at most) with none; `finished` tells a follower to stop.',
  params: runParams,
  query: eventsQuery,
  headers: conditionalHeaders,
  responses: {
    200: { description: 'A page of events.', schema: EventPage, headers: ETAG_HEADER },
    304: NOT_MODIFIED,
  },
});

export const cancelRun = defineRoute({
  operationId: 'cancelRun',
  method: 'post',
  path: '/runs/{runId}/cancel',
  tag: 'runs',
  summary: 'Cancel a run',
  description: 'Idempotent. `compensate: true` undoes the finished mutating steps of its segments before it ends.',
  retry: 'safe',
  params: runParams,
  body: { schema: cancelBody, required: false, example: { compensate: true } },
  responses: {
    200: { description: 'The run, cancelled or being cancelled.', schema: RunCancelled },
    202: PENDING_COMMAND,
  },
});

export const getRunCommand = defineRoute({
  operationId: 'getRunCommand',
  method: 'get',
  path: '/runs/{runId}/commands/{commandId}',
  tag: 'runs',
  summary: "A cancel's or an invalidation's decision, after a 202",
  description:
    'While the run has not decided it: 202 with the same pending body. Decided: the answer the request would have ' +
    'had (a cancel: 200 and the run; an invalidation: 202 and its steps; a refusal: its 409 or 410). Decisions are ' +
    'kept a day.',
  params: commandParams,
  responses: {
    200: { description: 'A decided cancel: the run, cancelled or being cancelled.', schema: RunCancelled },
    202: {
      description: 'A decided invalidation (its steps), or a command still pending.',
      schema: z.union([Invalidated, CommandPending]),
      headers: { Location: { description: 'While pending: where the decision is read (this URL).' } },
    },
    409: { description: "The decision refused the command (the request's own 409).", schema: ErrorBody },
    410: { description: "The decision refused the command (the request's own 410).", schema: ErrorBody },
  },
});

export const RUN_ROUTES = [createRun, listRuns, getRun, getRunPlan, listRunEvents, cancelRun, getRunCommand] as const;
