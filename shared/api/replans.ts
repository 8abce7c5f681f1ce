/**
 * Replanning from the outside: `POST /runs/{id}/replan {reason, objective?}` asks for a person's replan of any run
 * with a plan that is not cancelled (a finished one reopens on the new revision); the reason and the new objective
 * reach the planner. 409 at once for a cancelled run, at the replan limit or while another revision waits for
 * approval; else 202 with a planning job to poll at its Location, `GET /plans/{jobId}`, which ends with the revision
 * made, the approval it waits for (it adds a mutating target), or failed with the planner's code. `GET
 * /runs/{id}/plan/diff?from=&to=` says what changed between two plan revisions (added, removed, changed, superseded
 * steps; the console's diff).
 */
import { Hono } from 'hono';
import { replanRefusal } from '../engine/run/rules/revision-proposals.ts';
import { readJson, readQuery } from './body.ts';
import { diffPlans } from './console/plan-diff.ts';
import { requireRun } from './console/plan-lookup.ts';
import { serve } from './contract/route.ts';
import { getPlanDiff, replanRun } from './contract/routes/changes.ts';
import { planDiffQuery, replanBody } from './contract/schemas/requests.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { ApiError, answered, notFound } from './errors.ts';
import { planJobLocation, planJobView } from './plans.ts';

export function replanRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const { store } = deps;

  serve(app, replanRun, async (c) => {
    const { reason, objective } = await readJson(c, replanBody);
    const run = await requireRun(store, c.req.param('runId'));
    if (!deps.planJobs || deps.runSettings.maxReplans <= 0)
      throw new ApiError(503, 'E_UNAVAILABLE', 'replanning is not configured on this deployment');
    // A cancelled run, the limit, a revision waiting: the run's state says no, in its own words, before any job.
    const approvals = new Map((await store.listRunApprovals(run.runId)).map((a) => [a.approvalId, a]));
    const refused = replanRefusal({ run, approvals, settings: deps.runSettings });
    if (refused !== undefined) answered(refused);
    // The revision asks the planning model: a job, answered at once and polled for (plans.ts).
    const job = await deps.planJobs.submit(
      {
        kind: 'replan',
        runId: run.runId,
        reason,
        ...(objective === undefined ? {} : { objective }),
        requestedBy: c.get('principal'),
      },
      c.get('caller').tenant,
    );
    c.header('Location', planJobLocation(job.jobId));
    return c.json(planJobView(job), 202);
  });

  serve(app, getPlanDiff, async (c) => {
    const query = readQuery(c, planDiffQuery);
    const run = await requireRun(store, c.req.param('runId'));
    if (run.revision < 1) throw notFound(`run ${run.runId} has no plan yet (status ${run.status})`);
    const to = query.to ?? run.revision;
    const from = query.from ?? to - 1;
    const load = async (revision: number) => {
      const stored = await store.getPlanRevision(run.runId, revision);
      if (!stored) throw notFound(`run ${run.runId} has no plan revision ${revision}`);
      return stored;
    };
    const [after, before, records] = await Promise.all([
      load(to),
      from >= 1 ? load(from) : Promise.resolve(undefined),
      store.listSteps(run.runId),
    ]);
    const superseded = new Set(records.filter((r) => r.status === 'superseded').map((r) => r.stepId));
    return c.json({
      runId: run.runId,
      from: from >= 1 ? from : null,
      to,
      reason: after.reason,
      createdAt: after.createdAt,
      diff: diffPlans(before?.plan, after.plan, superseded),
    });
  });

  return app;
}
