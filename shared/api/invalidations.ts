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
import { ApiError, answered } from './errors.ts';

/** Why a step runs again when its invalidation says nothing. */
export const DEFAULT_INVALIDATION_REASON = 'invalidated on request';

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
    // A key names the invalidation: the run's decider answers a repeat of it with what the first one did.
    const value = answered(
      await deps.mailbox.ask(run.runId, {
        kind: 'Invalidate',
        roots: [c.req.param('stepId')],
        reason: reason ?? DEFAULT_INVALIDATION_REASON,
        key: requestId === undefined ? deps.newId() : `request#${requestId}`,
        by: c.get('principal'),
      }),
    );
    return c.json({ runId: run.runId, stepIds: value.stepIds ?? [], reopened: value.reopened === true }, 202);
  });

  return app;
}
