/**
 * Planning without executing: `POST /plans` asks the planner for a plan, `POST /plans/validate` checks one.
 */
import { Hono } from 'hono';
import { planRequestBody, readJson, validateBody } from './body.ts';
import { type ApiDeps, type ApiEnv, modeOf } from './deps.ts';
import { checkPlan, invalidPlanBody } from './plan-check.ts';

export function plansRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  app.post('/plans', async (c) => {
    const body = await readJson(c, planRequestBody);
    // Planner errors (PlannerError with its code) map to 422 in errors.ts.
    const plan = await deps.planner.plan({
      objective: body.objective,
      mode: modeOf(body),
      ...(body.directTarget === undefined ? {} : { directTarget: body.directTarget }),
    });
    return c.json({ plan });
  });

  app.post('/plans/validate', async (c) => {
    const body = await readJson(c, validateBody);
    const result = checkPlan(body.plan, deps.catalog, deps.limits, body.generated ?? false);
    if (result.valid) return c.json({ valid: true });
    return c.json(invalidPlanBody(result.errors), 422);
  });

  return app;
}
