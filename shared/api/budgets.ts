/**
 * A person's say over a paused run's limits: `POST /runs/{id}/budget {maxTokens?, maxCostUsd?, maxSeconds?,
 * maxReplans?}` raises the plan budget's limits and the replan limit of a run paused `budget_exhausted` or
 * `max_replans`, and the run goes on where it paused (the decider's RaiseBudget, engine/run/rules/budget-raise.ts).
 * 200 `{ runId, status, limits }`; 404 for an unknown run; 409 E_NOT_HELD_FOR_LIMIT for a run not held for a limit;
 * 422 E_LIMIT_NOT_RAISED or E_STILL_OVER_LIMIT. Who asked (the caller's subject) is recorded and announced.
 */
import { Hono } from 'hono';
import { readJson } from './body.ts';
import { requireRun } from './console/plan-lookup.ts';
import { serve } from './contract/route.ts';
import { raiseBudget } from './contract/routes/changes.ts';
import { raiseBudgetBody } from './contract/schemas/requests.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { answered } from './errors.ts';

export function budgetRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  serve(app, raiseBudget, async (c) => {
    const limits = await readJson(c, raiseBudgetBody);
    const run = await requireRun(deps.store, c.req.param('runId'));
    const value = answered(await deps.mailbox.ask(run.runId, { kind: 'RaiseBudget', limits, by: c.get('principal') }));
    return c.json({ runId: run.runId, status: value.status, limits: value.limits }, 200);
  });

  return app;
}
