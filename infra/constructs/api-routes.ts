/**
 * The API Gateway routes that need a JWT, read off the API's contract: one route per operation that takes a bearer
 * token, with the authorization scopes of the role it needs (shared/api/contract/roles.ts), so API Gateway refuses
 * a token without the role before the function runs (and the function checks again). Two routes more: `GET /health`
 * for any valid JWT, as before roles, and a catch-all per method for what no operation serves, open to admins only:
 * anybody else gets API Gateway's 401 or 403, never a hint of which paths exist.
 */

import { scopesFor } from '../../shared/api/contract/roles.ts';
import { needOf } from '../../shared/api/contract/route.ts';
import { ROUTES } from '../../shared/api/contract/routes/index.ts';
import type { RolesConfig } from './config.ts';

export interface AuthorizedRoute {
  readonly method: 'GET' | 'POST';
  /** API Gateway's path: the contract's, parameters in braces. */
  readonly path: string;
  /** Absent: any valid JWT (routeScopes off, or a route for any caller). */
  readonly scopes?: readonly string[];
}

export const CATCH_ALL_PATH = '/{proxy+}';

/** Every route with the JWT authorizer, in the contract's order, then the health check and the catch-alls. */
export function authorizedRoutes(roles: Pick<RolesConfig, 'scopePrefix' | 'routeScopes'>): AuthorizedRoute[] {
  const scoped = (scopes: readonly string[]) => (roles.routeScopes && scopes.length > 0 ? { scopes } : {});
  const routes: AuthorizedRoute[] = [];
  for (const route of ROUTES) {
    const need = needOf(route);
    // Not served by the deployed API (the conformance pack's ledger), or not behind the authorizer.
    if (need === undefined || route.optional) continue;
    const method = route.method === 'get' ? 'GET' : 'POST';
    routes.push({ method, path: route.path, ...scoped(scopesFor(need, roles.scopePrefix)) });
  }
  routes.push({ method: 'GET', path: '/health' });
  for (const method of ['GET', 'POST'] as const)
    routes.push({ method, path: CATCH_ALL_PATH, ...scoped(scopesFor('admin', roles.scopePrefix)) });
  return routes;
}

export const routeKey = (route: Pick<AuthorizedRoute, 'method' | 'path'>): string => `${route.method} ${route.path}`;
