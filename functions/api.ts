/**
 * The API Lambda: the Hono app behind API Gateway (HTTP API), through hono/aws-lambda. The same app runs locally on
 * @hono/node-server. Deployed, API Gateway's JWT authorizer has already checked the caller and the route's scopes,
 * so the app reads the `sub` claim and the roles (CAIRN_ROLE_GROUPS_CLAIM, CAIRN_ROLE_SCOPES_CLAIM,
 * CAIRN_ROLE_SCOPE_PREFIX) and checks the route's role again; with CAIRN_API_TOKEN set it checks that static bearer
 * token (an admin) instead.
 *
 * Environment (read by shared/config/settings.ts): CAIRN_TABLE_NAME, CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN,
 * CAIRN_EVENT_BUS_NAME (required); CAIRN_CATALOG_FILE or CAIRN_CATALOG, CAIRN_MAX_STEPS, CAIRN_MAX_DEPTH,
 * CAIRN_PLANNER_FUNCTION_NAME and CAIRN_REPLANNER_FUNCTION_NAME (where planning jobs go), CAIRN_API_TOKEN, CAIRN_CONSOLE_DIR (the console files in the bundle)
 * and CAIRN_CONSOLE_OIDC_*, and the coordinator's settings (cancellation runs the coordinator's cancelRun in this
 * process, a manual replan's checks the replanner with CAIRN_MAX_REPLANS, an invalidation the invalidator). Webhooks:
 * CAIRN_WEBHOOK_SECRET_PREFIX (Secrets Manager names `<prefix>/<source>`; absent: every delivery is refused),
 * CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS and CAIRN_WEBHOOK_TENANTS (context webhookTenants). Tenants:
 * CAIRN_MAX_RUNNING_RUNS_PER_TENANT (a new run over the bound is queued).
 */
import { handle } from 'hono/aws-lambda';
import { type ApiDeps, createApp } from '../shared/api/app.ts';
import type { AuthConfig } from '../shared/api/auth.ts';
import type { Env, Settings } from '../shared/config/settings.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

export type ApiHandler = ReturnType<typeof createHandler>;

export function createHandler(deps: ApiDeps) {
  return handle(createApp(deps));
}

/**
 * A static bearer token when CAIRN_API_TOKEN is set; else API Gateway's JWT authorizer has checked the caller, whose
 * roles are in the claims the settings name.
 */
export const apiAuth = (settings: Settings): AuthConfig =>
  settings.apiToken === undefined
    ? { kind: 'gateway', claims: settings.roleClaims }
    : { kind: 'token', token: settings.apiToken };

/** The API's dependencies from the container's root: the same store and services the other Lambdas build. */
export function defaultDeps(env: Env = process.env): ApiDeps {
  const root = lambdaRoot(env);
  return root.apiDeps({ auth: apiAuth(root.settings) });
}

// Typed as the adapter's own (generic) handler; built on the first request like every entry's.
export const handler = lazyHandler('api', () => createHandler(defaultDeps())) as ApiHandler;
