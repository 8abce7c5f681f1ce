/**
 * Planning without executing: `POST /plans` asks for a plan, `GET /plans/{jobId}` answers a planning job,
 * `POST /plans/validate` checks a plan.
 *
 * A DIRECT plan is one step bound to the named target: no model is asked, so it is answered at once (200 `{plan}`).
 * A DECOMPOSE plan may ask a model for a long time (a 64-step plan from Bedrock takes longer than API Gateway's
 * 30 s): the request becomes a planning job, answered 202 `{jobId, status: 'pending'}` with its Location, and the
 * plan is polled for there (the planner Lambda runs the job; embedded, the same code runs after the request).
 */
import { Hono } from 'hono';
import type { PlanJobRecord } from '../ports/plan-jobs.ts';
import { bodyBytes, planRequestBody, readJson } from './body.ts';
import { serve } from './contract/route.ts';
import { createPlan, getPlanJob, validatePlan } from './contract/routes/plans.ts';
import { type ApiDeps, type ApiEnv, modeOf } from './deps.ts';
import { ApiError, notFound } from './errors.ts';
import { invalidPlanBody } from './plan-check.ts';
import { validateRequest } from './plan-requests.ts';

/** Where a job is polled. */
export const planJobLocation = (jobId: string): string => `/plans/${encodeURIComponent(jobId)}`;

/** A job as the API shows it: what was asked, where it stands and, once finished, its plan, revision or error. */
export function planJobView(job: PlanJobRecord): Record<string, unknown> {
  return {
    jobId: job.jobId,
    kind: job.request.kind,
    status: job.status,
    ...(job.request.kind === 'replan' ? { runId: job.request.runId } : {}),
    createdAt: job.createdAt,
    ...(job.finishedAt === undefined ? {} : { finishedAt: job.finishedAt }),
    ...(job.result?.plan === undefined ? {} : { plan: job.result.plan }),
    ...(job.result?.revision === undefined ? {} : { revision: job.result.revision }),
    ...(job.result?.approvalId === undefined ? {} : { approvalId: job.result.approvalId }),
    ...(job.error === undefined ? {} : { error: job.error }),
  };
}

export const requirePlanJobs = (deps: ApiDeps): NonNullable<ApiDeps['planJobs']> => {
  if (!deps.planJobs) throw new ApiError(503, 'E_UNAVAILABLE', 'planning jobs are not configured on this deployment');
  return deps.planJobs;
};

export function plansRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  serve(app, createPlan, async (c) => {
    const body = await readJson(c, planRequestBody);
    const request = {
      objective: body.objective,
      mode: modeOf(body),
      ...(body.directTarget === undefined ? {} : { directTarget: body.directTarget }),
    };
    if (request.mode === 'DIRECT') {
      // Planner errors (PlannerError with its code) map to 422 in errors.ts.
      return c.json({ plan: await deps.planner.plan(request) });
    }
    const job = await requirePlanJobs(deps).submit({ kind: 'plan', ...request }, c.get('caller').tenant);
    c.header('Location', planJobLocation(job.jobId));
    return c.json(planJobView(job), 202);
  });

  serve(app, getPlanJob, async (c) => {
    const jobId = c.req.param('jobId');
    const job = await requirePlanJobs(deps).get(jobId);
    if (!job) throw notFound(`plan job ${jobId} not found (a job is kept for a day)`);
    return c.json(planJobView(job));
  });

  serve(app, validatePlan, async (c) => {
    // Decoded and validated where the deps say (plan-requests.ts): off the event loop when it serves many.
    const result = await validateRequest(deps, await bodyBytes(c));
    if (result.valid) return c.json({ valid: true });
    return c.json(invalidPlanBody(result.errors), 422);
  });

  return app;
}
