/**
 * The routes by which a person changes a run after it started (invalidations.ts, compensations.ts, replans.ts):
 * invalidate a step, act on a failed compensation, replan, and see what a revision changed.
 */
import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { CommandPending, CompensationActed, Invalidated, LimitsRaised, PlanJob } from '../schemas/approvals.ts';
import { ErrorBody, idempotencyHeaders, runParams, stepParams } from '../schemas/common.ts';
import { RevisionDiff } from '../schemas/console.ts';
import {
  compensationActionBody,
  invalidateBody,
  planDiffQuery,
  raiseBudgetBody,
  replanBody,
} from '../schemas/requests.ts';
import { PENDING_COMMAND } from './runs.ts';

const conflict = (description: string) => ({ description, schema: ErrorBody });

export const invalidateStep = defineRoute({
  operationId: 'invalidateStep',
  method: 'post',
  path: '/runs/{runId}/steps/{stepId}/invalidate',
  tag: 'steps',
  summary: 'Invalidate a step and everything downstream of it',
  description:
    'The step (a group: every step in it) and its downstream closure start a new generation; upstream and unrelated ' +
    'steps keep their results; a finished run reopens. A repeat with the same Idempotency-Key answers the first ' +
    "request's result.",
  retry: 'keyed',
  params: stepParams,
  headers: idempotencyHeaders,
  body: { schema: invalidateBody, required: false, example: { reason: 'the source data changed' } },
  responses: {
    202: {
      description:
        'The steps that start a new generation; or, when the decision has not come back within the wait, the ' +
        'pending command, whose decision is read at its Location.',
      schema: z.union([Invalidated, CommandPending]),
      headers: PENDING_COMMAND.headers,
    },
    409: conflict('The run has not started, was cancelled or is being cancelled.'),
  },
});

export const actOnCompensation = defineRoute({
  operationId: 'actOnCompensation',
  method: 'post',
  path: '/runs/{runId}/steps/{stepId}/compensation',
  tag: 'steps',
  summary: 'Retry a failed compensation, or record that it was undone by hand',
  params: stepParams,
  body: { schema: compensationActionBody, required: true, example: { action: 'resolve', note: 'refunded by hand' } },
  responses: {
    202: { description: 'The run reopens and carries its saga on.', schema: CompensationActed },
    409: conflict("E_NOT_COMPENSATION_FAILED: the step's compensation has not failed (or someone acted first)."),
  },
});

export const replanRun = defineRoute({
  operationId: 'replanRun',
  method: 'post',
  path: '/runs/{runId}/replan',
  tag: 'steps',
  summary: "Ask for a person's replan",
  description:
    'A planning job: poll its Location (GET /plans/{jobId}) until it made the revision, waits for an approval (the ' +
    "revision adds a mutating target) or failed with the planner's code.",
  params: runParams,
  body: { schema: replanBody, required: true, example: { reason: 'use the staging database instead' } },
  responses: {
    202: {
      description: 'The planning job.',
      schema: PlanJob,
      headers: { Location: { description: 'Where the job is polled: /plans/{jobId}.' } },
    },
    409: conflict('E_RUN_CANCELLED, E_REPLAN_LIMIT or E_REVISION_PENDING.'),
  },
});

export const raiseBudget = defineRoute({
  operationId: 'raiseBudget',
  method: 'post',
  path: '/runs/{runId}/budget',
  tag: 'steps',
  summary: "Raise a paused run's budget or replan limit; it goes on where it paused",
  description:
    'For a run paused `budget_exhausted` (its plan budget under `onExhausted: "pause"`) or `max_replans`. Each limit ' +
    "named must be larger than the run's now, and the raise must let the run go on (over its budget still, or at " +
    'its replan limit still: 422 E_STILL_OVER_LIMIT). The raise holds for every later revision, and is announced ' +
    '(BudgetRaised) and recorded with who asked.',
  params: runParams,
  body: { schema: raiseBudgetBody, required: true, example: { maxTokens: 20000, maxReplans: 4 } },
  responses: {
    200: { description: "The run's limits now, and its status.", schema: LimitsRaised },
    409: conflict('E_NOT_HELD_FOR_LIMIT: the run is not paused for budget_exhausted or max_replans.'),
    422: {
      description:
        "E_LIMIT_NOT_RAISED: no limit named, or one not larger than the run's (or one it has not); " +
        'E_STILL_OVER_LIMIT: the run would still be held.',
      schema: ErrorBody,
    },
  },
});

export const getPlanDiff = defineRoute({
  operationId: 'getPlanDiff',
  method: 'get',
  path: '/runs/{runId}/plan/diff',
  tag: 'steps',
  summary: 'What changed between two plan revisions',
  description: '`to` defaults to the current revision, `from` to the one before it.',
  params: runParams,
  query: planDiffQuery,
  responses: { 200: { description: 'Added, removed, changed and superseded steps.', schema: RevisionDiff } },
});

export const CHANGE_ROUTES = [invalidateStep, actOnCompensation, replanRun, raiseBudget, getPlanDiff] as const;
