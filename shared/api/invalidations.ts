/**
 * Invalidation on request: `POST /runs/{id}/steps/{stepId}/invalidate {reason?}` starts a new generation of the
 * step (a group: of all its executable descendants) and of everything downstream of it; upstream and unrelated
 * steps keep their results, and a finished run reopens. 202 `{ runId, stepIds, reopened }`; 404 for an unknown run
 * or step; 409 for a run that has not started, was cancelled or is being cancelled. An `Idempotency-Key` header makes a retried request
 * answer the first one's result instead of invalidating again.
 */
import { Hono } from 'hono';
import { readOptionalJson } from './body.ts';
import { requireRun } from './console/plan-lookup.ts';
import { serve } from './contract/route.ts';
import { invalidateStep } from './contract/routes/changes.ts';
import { invalidateBody } from './contract/schemas/requests.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { ApiError } from './errors.ts';
import { IDEMPOTENCY_HEADER } from './runs.ts';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export function invalidationRoutes(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  serve(app, invalidateStep, async (c) => {
    // The body is optional: no body (or an empty one) invalidates with the default reason.
    const reason = (await readOptionalJson(c, invalidateBody))?.reason;
    const requestId = c.req.header(IDEMPOTENCY_HEADER);
    if (requestId !== undefined && !KEY_PATTERN.test(requestId))
      throw new ApiError(400, 'E_BAD_REQUEST', `${IDEMPOTENCY_HEADER} must be 1-255 printable ASCII characters`);
    const run = await requireRun(deps.store, c.req.param('runId'));
    if (!deps.invalidateStep)
      throw new ApiError(503, 'E_UNAVAILABLE', 'invalidation is not configured on this deployment');
    const result = await deps.invalidateStep({
      runId: run.runId,
      stepId: c.req.param('stepId'),
      ...(reason === undefined ? {} : { reason }),
      ...(requestId === undefined ? {} : { requestId }),
    });
    return c.json({ runId: result.runId, stepIds: result.stepIds, reopened: result.reopened }, 202);
  });

  return app;
}
