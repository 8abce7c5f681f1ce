/**
 * Ids in paths, checked once for every route that takes one, before any store call: a run, step, approval or
 * planning-job id that cairn could never have made is a 404 (E_NOT_FOUND, as for an id it did not make), never a
 * store error. Unchecked, a 3 KB run id reached DynamoDB, whose key limit answered ValidationException: a 500 and a
 * stack trace in the log for a request that only named nothing.
 *
 * What cairn makes: run and job ids are UUIDs (any `Place.newId`; tests use `run-1`), step ids match the plan
 * schema's STEP_ID_PATTERN (and synthetic ones add `~`: `~replan~<id>`), approval ids join a run id, a step id and
 * counters with dots. So an id is 1..MAX_PATH_ID_LENGTH characters of `[A-Za-z0-9_.~-]`: no separator of the
 * table's keys (`#`), no space, nothing that needs escaping.
 */
import type { MiddlewareHandler } from 'hono';
import { notFound } from './errors.ts';

/** Far above any id cairn makes (a gate's approval id: about 130 characters), far below DynamoDB's key limits. */
export const MAX_PATH_ID_LENGTH = 256;
export const PATH_ID_PATTERN = new RegExp(`^[A-Za-z0-9_.~-]{1,${MAX_PATH_ID_LENGTH}}$`);

export const isPathId = (value: string): boolean => PATH_ID_PATTERN.test(value);

/** The id parameters of the routes, by name, with what they name (for the 404's message). */
export const ID_PARAMS: Readonly<Record<string, string>> = Object.freeze({
  runId: 'run',
  stepId: 'step',
  id: 'approval',
  jobId: 'plan job',
  commandId: 'command',
});

/**
 * Every route pattern with an id parameter (a new one belongs here; a test fails for a route the guard misses).
 * Each guard sees the parameters of its own pattern, so a nested id has its pattern beside its parent's.
 */
export const ID_ROUTE_PATTERNS: readonly string[] = Object.freeze([
  '/runs/:runId',
  '/runs/:runId/*',
  '/runs/:runId/steps/:stepId',
  '/runs/:runId/steps/:stepId/*',
  '/runs/:runId/commands/:commandId',
  '/approvals/:id',
  '/approvals/:id/*',
  '/plans/:jobId',
]);

/** Answers 404 for an id parameter that cannot be an id; the id itself stays out of the message (it may be huge). */
export const pathIdGuard: MiddlewareHandler = async (c, next) => {
  const params = c.req.param() as Record<string, string | undefined>;
  for (const [name, noun] of Object.entries(ID_PARAMS)) {
    const value = params[name];
    if (value !== undefined && !isPathId(value))
      throw notFound(`${noun} not found: an id is 1 to ${MAX_PATH_ID_LENGTH} characters of A-Z a-z 0-9 _ . ~ -`);
  }
  await next();
};
