/**
 * A person's answer to a compensation that failed for good (the run is paused `compensation_failed`, with the
 * evidence): `POST /runs/{id}/steps/{stepId}/compensation {action: "retry"}` calls the compensation again;
 * `{action: "resolve", note}` records that the effect was undone by hand. Either reopens the run and carries its
 * saga on (the next compensation in reverse completion order, or the run's end). 202 `{ runId, stepId, status,
 * reopened }`; 404 for an unknown run or step; 409 `E_NOT_COMPENSATION_FAILED` for a step whose compensation has not
 * failed (or that someone else acted on first). Who acts (the JWT `sub`, or `local-token`) is recorded.
 */
import { Hono } from 'hono';
import { isConflictError } from '../errors.ts';
import { NOT_COMPENSATION_FAILED_CODE } from '../services/compensation-actions.ts';
import { readJson } from './body.ts';
import { requireRun } from './console/plan-lookup.ts';
import { serve } from './contract/route.ts';
import { actOnCompensation } from './contract/routes/changes.ts';
import { compensationActionBody } from './contract/schemas/requests.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { ApiError } from './errors.ts';

export function compensationRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  serve(app, actOnCompensation, async (c) => {
    const body = await readJson(c, compensationActionBody);
    const run = await requireRun(deps.store, c.req.param('runId'));
    if (!deps.actOnCompensation)
      throw new ApiError(503, 'E_UNAVAILABLE', 'compensation actions are not configured on this deployment');
    const requestedBy = c.get('principal');
    try {
      const result = await deps.actOnCompensation({
        runId: run.runId,
        stepId: c.req.param('stepId'),
        action: body.action === 'retry' ? { kind: 'retry' } : { kind: 'resolve', note: body.note },
        ...(requestedBy === undefined ? {} : { requestedBy }),
      });
      return c.json(result, 202);
    } catch (error) {
      if (isConflictError(error) && error.context.code === NOT_COMPENSATION_FAILED_CODE)
        throw new ApiError(409, NOT_COMPENSATION_FAILED_CODE, error.message);
      throw error;
    }
  });

  return app;
}
