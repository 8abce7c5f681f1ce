/**
 * A person's answer to a compensation that failed for good (the run is paused `compensation_failed`, with the
 * evidence): `POST /runs/{id}/steps/{stepId}/compensation {action: "retry"}` calls the compensation again;
 * `{action: "resolve", note}` records that the effect was undone by hand. Either reopens the run and carries its
 * saga on (the next compensation in reverse completion order, or the run's end). 202 `{ runId, stepId, status,
 * reopened }`; 404 for an unknown run or step; 409 `E_NOT_COMPENSATION_FAILED` for a step whose compensation has not
 * failed (or that someone else acted on first). Who acts (the JWT `sub`, or `local-token`) is recorded.
 */
import { Hono } from 'hono';
import { readJson } from './body.ts';
import { requireRun } from './console/plan-lookup.ts';
import { serve } from './contract/route.ts';
import { actOnCompensation } from './contract/routes/changes.ts';
import { compensationActionBody } from './contract/schemas/requests.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { answered } from './errors.ts';

export function compensationRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  serve(app, actOnCompensation, async (c) => {
    const body = await readJson(c, compensationActionBody);
    const run = await requireRun(deps.store, c.req.param('runId'));
    const stepId = c.req.param('stepId');
    const value = answered(
      await deps.mailbox.ask(run.runId, {
        kind: 'ActOnCompensation',
        stepId,
        action: body.action === 'retry' ? { kind: 'retry' } : { kind: 'resolve', note: body.note },
        by: c.get('principal') ?? null,
      }),
    );
    return c.json({ runId: run.runId, stepId, ...value }, 202);
  });

  return app;
}
