/**
 * Replanning from the outside: `POST /runs/{id}/replan {reason}` asks for a scoped replan of the run's failed step
 * (202 with the revision made; 409 at the replan limit or with nothing to replan; 422 when the planner finds no
 * revision), and `GET /runs/{id}/plan/diff?from=&to=` says what changed between two plan revisions (added, removed,
 * changed, superseded steps; the console's diff).
 */
import { Hono } from 'hono';
import { z } from 'zod';
import { isConflictError } from '../errors.ts';
import { readJson, readQuery } from './body.ts';
import { diffPlans } from './console/plan-diff.ts';
import { requireRun } from './console/plan-lookup.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { ApiError, notFound } from './errors.ts';

export const replanBody = z.strictObject({
  reason: z
    .string()
    .max(2000)
    .refine((s) => s.trim().length > 0, { message: 'must not be blank' }),
});

const revisionNumber = z
  .string()
  .regex(/^\d+$/, { message: 'must be a non-negative integer' })
  .transform(Number)
  .pipe(z.number().int().min(0).max(1_000_000));
const diffQuery = z.strictObject({ from: revisionNumber.optional(), to: revisionNumber.optional() });

export function replanRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const { store } = deps;

  app.post('/runs/:runId/replan', async (c) => {
    const { reason } = await readJson(c, replanBody);
    const run = await requireRun(store, c.req.param('runId'));
    if (!deps.replanRun) throw new ApiError(503, 'E_UNAVAILABLE', 'replanning is not configured on this deployment');
    try {
      const answer = await deps.replanRun({ runId: run.runId, reason });
      return c.json(answer.revision === undefined ? { runId: run.runId } : answer, 202);
    } catch (error) {
      // The limit, a cancelled run, nothing failed: the run's state says no, in its own words.
      if (isConflictError(error)) {
        const code = typeof error.context.code === 'string' ? error.context.code : 'E_CONFLICT';
        throw new ApiError(409, code, error.message);
      }
      throw error;
    }
  });

  app.get('/runs/:runId/plan/diff', async (c) => {
    const query = readQuery(c, diffQuery);
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
