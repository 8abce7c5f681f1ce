/**
 * Invalidation on request: `POST /runs/{id}/steps/{stepId}/invalidate {reason?}` starts a new generation of the
 * step (a group: of all its executable descendants) and of everything downstream of it; upstream and unrelated
 * steps keep their results, and a finished run reopens. 202 `{ runId, stepIds, reopened }`; 404 for an unknown run
 * or step; 409 for a run that has not started, was cancelled or is being cancelled. An `Idempotency-Key` header makes a retried request
 * answer the first one's result instead of invalidating again. A decision that has not come back within the API's
 * wait is answered 202 with its command's status URL (commands.ts).
 */

import { Hono } from 'hono';
import { readOptionalJson } from './body.ts';
import { askWithin, commandIdOf, invalidationAnswer, keyedCommandId, pendingAnswer } from './commands.ts';
import { requireRun } from './console/plan-lookup.ts';
import { serve } from './contract/route.ts';
import { invalidateStep } from './contract/routes/changes.ts';
import { invalidateBody } from './contract/schemas/requests.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { ApiError } from './errors.ts';

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
    // A large invalidation may take longer than a request should wait: past the wait, 202 and its status URL. A
    // keyed request's command id comes from its key, so a retry of it is the same command.
    const commandId =
      requestId === undefined
        ? commandIdOf('invalidate', run.runId, deps.newId())
        : keyedCommandId('invalidate', run.runId, requestId);
    const ask = async (key: string): Promise<InvalidationAnswer> => {
      const command = {
        kind: 'Invalidate',
        roots: [c.req.param('stepId')],
        reason: reason ?? DEFAULT_INVALIDATION_REASON,
        key,
        by: c.get('principal'),
      } as const;
      const reply = await askWithin(deps, run.runId, command, commandId);
      if (reply === 'pending') throw new StillPending();
      return invalidationAnswer(run.runId, reply);
    };
    try {
      if (requestId === undefined) return c.json(await ask(deps.newId()), 202);
      return c.json(await keptAnswer(deps, run.runId, requestId, ask), 202);
    } catch (error) {
      if (error instanceof StillPending) return pendingAnswer(c, run.runId, commandId);
      throw error;
    }
  });

  return app;
}

/** The decision did not come back within the API's wait (a keyed request's memory is let go: a retry asks again). */
class StillPending extends Error {}

interface InvalidationAnswer {
  readonly runId: string;
  readonly stepIds: readonly string[];
  readonly reopened: boolean;
}

/** How long a request's answer is kept for its retries, and how long a request in progress holds its key. */
const ANSWER_KEPT_SECONDS = 86_400;
const IN_PROGRESS_SECONDS = 60;

/**
 * A request with an Idempotency-Key is answered once and its answer kept: a retry gets the first answer. The key
 * also names the invalidation to the run's decider, which moves nothing again for it, so a retry whose first answer
 * was lost (the API died between the decision and keeping it) is answered with an empty `stepIds`.
 */
async function keptAnswer(
  deps: ApiDeps,
  runId: string,
  requestId: string,
  ask: (key: string) => Promise<InvalidationAnswer>,
): Promise<InvalidationAnswer> {
  const key = `invalidate#${runId}#${requestId}`;
  const now = Math.floor(deps.clock().getTime() / 1000);
  const existing = await deps.store.beginIdempotent(key, now + IN_PROGRESS_SECONDS, now);
  if (existing?.status === 'completed') return existing.result as InvalidationAnswer;
  if (existing?.status === 'in_progress')
    throw new ApiError(409, 'E_IN_PROGRESS', 'a request with this Idempotency-Key is still being answered: retry', {
      retryAfterSeconds: 1,
    });
  try {
    const answer = await ask(`request#${requestId}`);
    await deps.store.completeIdempotent(key, answer, now + ANSWER_KEPT_SECONDS);
    return answer;
  } catch (error) {
    await deps.store.abortIdempotent(key).catch(() => undefined);
    throw error;
  }
}
