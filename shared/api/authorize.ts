/**
 * Authorization, after authentication (auth.ts) and before the route's own work: a caller whose roles do not meet
 * the route's need (contract/roles.ts) is refused 403 E_FORBIDDEN, naming the role it takes. `serve` puts this in
 * front of every route that takes a bearer token, so a route cannot be served without its rule; deployed, API
 * Gateway has already refused a token without the route's scopes, and this checks again.
 */
import type { MiddlewareHandler } from 'hono';
import type { Caller } from './caller.ts';
import { GRANTED_BY, holds, type Need } from './contract/roles.ts';
import type { ApiEnv } from './deps.ts';
import { ApiError } from './errors.ts';

/** 403 E_FORBIDDEN: what the caller lacks, and which roles would do. */
export function forbidden(caller: Caller, need: Exclude<Need, 'caller'>): ApiError {
  const roles = [...caller.roles].sort();
  const others = GRANTED_BY[need].filter((role) => role !== need);
  return new ApiError(
    403,
    'E_FORBIDDEN',
    `this needs the ${need} role${others.length > 0 ? ` (or ${others.join(' or ')})` : ''}; ` +
      `${caller.subject} has ${roles.length === 0 ? 'no role' : roles.join(', ')}`,
    { details: { need, roles } },
  );
}

/** Throws E_FORBIDDEN unless the caller meets the need. */
export function checkNeed(caller: Caller, need: Need): void {
  if (need !== 'caller' && !holds(caller.roles, need)) throw forbidden(caller, need);
}

/** The middleware `serve` registers in front of a route that takes a bearer token. */
export const requireNeed =
  (need: Need): MiddlewareHandler<ApiEnv> =>
  async (c, next) => {
    checkNeed(c.get('caller'), need);
    return next();
  };
