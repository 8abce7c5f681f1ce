/**
 * The read models the console needs beyond the public run API: a step's details, the plan revisions with their
 * diffs, the timeline, and a dry run of an approval's edited output against the step's contract (the same check,
 * Catalog.validateOutput on the step's target, that `POST /approvals/{id}` applies, without deciding anything).
 * All behind the API's authentication.
 */

import { Hono } from 'hono';
import { tenantOf } from '../../config/defaults.ts';
import { withPlannedSteps } from '../../engine/run/planned.ts';
import { parseWith, readJson, readQuery } from '../body.ts';
import { serve } from '../contract/route.ts';
import { checkApprovalOutput } from '../contract/routes/approvals.ts';
import { getRevisionDiff, getStep, getTimeline, listRevisions } from '../contract/routes/console.ts';
import { outputCheckBody, revisionDiffQuery, revisionParam } from '../contract/schemas/requests.ts';
import type { ApiDeps, ApiEnv } from '../deps.ts';
import { ApiError, notFound } from '../errors.ts';
import { countDiff, diffPlans } from './plan-diff.ts';
import { currentPlan, findPlanStep, requireRun } from './plan-lookup.ts';
import { buildStepDetail } from './step-detail.ts';
import { readStepDetail } from './step-reads.ts';
import { buildTimeline } from './timeline-model.ts';

export function consoleDataRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const { store } = deps;

  const planAt = async (runId: string, revision: number) => {
    const stored = await store.getPlanRevision(runId, revision);
    if (!stored) throw notFound(`run ${runId} has no plan revision ${revision}`);
    return stored;
  };

  const supersededSteps = async (runId: string): Promise<Set<string>> =>
    new Set((await store.listSteps(runId)).filter((r) => r.status === 'superseded').map((r) => r.stepId));

  serve(app, getStep, async (c) => {
    const run = await requireRun(store, c.req.param('runId'));
    const stepId = c.req.param('stepId');
    const found = await findPlanStep(store, run, stepId);
    if (!found) throw notFound(`run ${run.runId} has no step ${stepId}`);
    return c.json(buildStepDetail(await readStepDetail(store, run, found)));
  });

  serve(app, listRevisions, async (c) => {
    const run = await requireRun(store, c.req.param('runId'));
    const listed = (await store.listPlanRevisions(run.runId)).sort((a, b) => a.revision - b.revision);
    const [plans, superseded] = await Promise.all([
      Promise.all(listed.map((r) => store.getPlanRevision(run.runId, r.revision))),
      supersededSteps(run.runId),
    ]);
    const revisions = listed.map((r, i) => {
      const plan = plans[i]?.plan;
      const previous = i > 0 ? plans[i - 1]?.plan : undefined;
      return {
        revision: r.revision,
        reason: r.reason,
        createdAt: r.createdAt,
        current: r.revision === run.revision,
        steps: plan?.steps.length ?? 0,
        changes: plan ? countDiff(diffPlans(previous, plan, superseded)) : null,
      };
    });
    return c.json({ runId: run.runId, revision: run.revision, revisions });
  });

  serve(app, getRevisionDiff, async (c) => {
    const run = await requireRun(store, c.req.param('runId'));
    const revision = parseWith(revisionParam, c.req.param('revision'), 'path');
    const { against } = readQuery(c, revisionDiffQuery);
    const base = against ?? revision - 1;
    const [after, before, superseded] = await Promise.all([
      planAt(run.runId, revision),
      base >= 1 ? planAt(run.runId, base) : Promise.resolve(undefined),
      supersededSteps(run.runId),
    ]);
    return c.json({
      runId: run.runId,
      from: base >= 1 ? base : null,
      to: revision,
      reason: after.reason,
      createdAt: after.createdAt,
      diff: diffPlans(before?.plan, after.plan, superseded),
    });
  });

  serve(app, getTimeline, async (c) => {
    const run = await requireRun(store, c.req.param('runId'));
    const [plan, records, attempts, approvals] = await Promise.all([
      currentPlan(store, run),
      store.listSteps(run.runId),
      store.listAttempts(run.runId),
      store.listApprovals({ tenant: tenantOf(run), runId: run.runId }),
    ]);
    const steps = withPlannedSteps(run, plan, records);
    return c.json(buildTimeline({ run, plan, records: steps, attempts, approvals, now: deps.clock() }));
  });

  serve(app, checkApprovalOutput, async (c) => {
    const { output } = await readJson(c, outputCheckBody);
    const approval = await store.getApproval(c.req.param('id'));
    if (!approval) throw notFound(`approval ${c.req.param('id')} not found`);
    const run = await requireRun(store, approval.runId);
    const found = await findPlanStep(store, run, approval.stepId);
    if (!found?.step.target) {
      throw new ApiError(422, 'E_INVALID_OUTPUT', `step ${approval.stepId} is no longer in the run's plan`);
    }
    const check = deps.catalog.validateOutput(found.step.target, output);
    return c.json({
      approvalId: approval.approvalId,
      status: approval.status,
      target: found.step.target,
      valid: check.ok,
      errors: check.ok ? [] : check.errors,
    });
  });

  return app;
}
