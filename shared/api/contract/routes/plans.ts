/** Planning without running (plans.ts serves them): ask for a plan, poll a planning job, validate a plan. */
import { z } from 'zod';
import { planRequestBody, validateBody } from '../../body.ts';
import { defineRoute } from '../route.ts';
import { PlanAnswer, PlanJob, Valid } from '../schemas/approvals.ts';
import { ErrorBody, InvalidPlan, pathId } from '../schemas/common.ts';

export const createPlan = defineRoute({
  operationId: 'createPlan',
  method: 'post',
  path: '/plans',
  tag: 'plans',
  summary: 'Plan an objective without running it',
  description:
    'DIRECT (one step bound to the target, no model) answers the plan at once; DECOMPOSE may ask a model for long, ' +
    'so it answers 202 with a planning job to poll at its Location.',
  body: { schema: planRequestBody, required: true, example: { objective: 'say hello', directTarget: 'tool:echo' } },
  responses: {
    200: { description: 'The plan (DIRECT).', schema: PlanAnswer },
    202: {
      description: 'A planning job (DECOMPOSE).',
      schema: PlanJob,
      headers: { Location: { description: 'Where the job is polled: /plans/{jobId}.' } },
    },
    422: { description: "The planner's refusal, with its code (an unknown target...).", schema: ErrorBody },
  },
});

export const getPlanJob = defineRoute({
  operationId: 'getPlanJob',
  method: 'get',
  path: '/plans/{jobId}',
  tag: 'plans',
  summary: 'Read a planning job (kept a day)',
  params: z.object({ jobId: pathId }),
  responses: { 200: { description: 'The job: pending, succeeded or failed.', schema: PlanJob } },
});

export const validatePlan = defineRoute({
  operationId: 'validatePlan',
  method: 'post',
  path: '/plans/validate',
  tag: 'plans',
  summary: 'Validate a plan against the catalog',
  description: '`generated: true` applies the checks of a plan from a model or a client (untrusted).',
  retry: 'safe',
  body: { schema: validateBody, required: true },
  responses: {
    200: { description: 'The plan is valid.', schema: Valid },
    422: { description: 'The plan is invalid: every issue.', schema: InvalidPlan },
  },
});

export const PLAN_ROUTES = [createPlan, getPlanJob, validatePlan] as const;
