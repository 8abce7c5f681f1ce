/**
 * The HTTP API: one Hono app, served by API Gateway + Lambda when deployed and by @hono/node-server locally.
 * Every route but `/health`, `/openapi.json`, the console's static files and the signed webhooks needs a caller
 * (auth.ts lists the public ones) with the role the route needs (contract/roles.ts, checked by authorize.ts); every
 * error is JSON (errors.ts). What each route takes and answers is its
 * definition in contract/routes, from which the OpenAPI document is built.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { approvalsRoutes } from './approvals.ts';
import { authMiddleware } from './auth.ts';
import { MAX_BODY_BYTES } from './body.ts';
import { budgetRoutes } from './budgets.ts';
import { callerView } from './caller.ts';
import { commandRoutes } from './commands.ts';
import { compensationRoutes } from './compensations.ts';
import { conformanceRoutes } from './conformance.ts';
import { consoleDataRoutes, consoleRoutes } from './console/routes.ts';
import { openApiDocument } from './contract/document.ts';
import { serve } from './contract/route.ts';
import { getCaller, getOpenApi, health } from './contract/routes/service.ts';
import type { ApiDeps, ApiEnv } from './deps.ts';
import { errorBody, handleError, handleNotFound } from './errors.ts';
import { invalidationRoutes } from './invalidations.ts';
import { ID_ROUTE_PATTERNS, pathIdGuard } from './path-ids.ts';
import { plansRoutes } from './plans.ts';
import { replanRoutes } from './replans.ts';
import { runsRoutes } from './runs.ts';
import { tenantGuard } from './tenancy.ts';
import { webhookRoutes } from './webhooks.ts';

export type { ApiDeps, PlanRequest } from './deps.ts';

export function createApp(deps: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.onError(handleError);
  app.notFound(handleNotFound);

  // First, for every request: the public routes below are the ones auth.ts names, matched on the routed path.
  app.use('*', authMiddleware(deps.auth));
  serve(app, health, (c) => c.json({ ok: true }));
  serve(app, getOpenApi, (c) => c.json(openApiDocument()));
  app.route('/', webhookRoutes(deps)); // webhook senders authenticate with a per-source signature instead
  app.route('/', consoleRoutes(deps)); // the page holds no data: it loads before sign-in

  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => c.json(errorBody('E_TOO_LARGE', `the request body exceeds ${MAX_BODY_BYTES} bytes`), 413),
    }),
  );

  // Before any route reads the store: an id no route could find is a 404, not a store error.
  for (const pattern of ID_ROUTE_PATTERNS) app.use(pattern, pathIdGuard);
  // Then: an id of another tenant's is a 404 too, whatever the route (tenancy.ts).
  const tenantCheck = tenantGuard(deps.store);
  for (const pattern of ID_ROUTE_PATTERNS) app.use(pattern, tenantCheck);

  serve(app, getCaller, (c) => c.json(callerView(c.get('caller'))));
  app.route('/', plansRoutes(deps));
  app.route('/', runsRoutes(deps));
  app.route('/', invalidationRoutes(deps));
  app.route('/', commandRoutes(deps));
  app.route('/', compensationRoutes(deps));
  app.route('/', replanRoutes(deps));
  app.route('/', budgetRoutes(deps));
  app.route('/', approvalsRoutes(deps));
  app.route('/', consoleDataRoutes(deps));
  if (deps.ledger) app.route('/', conformanceRoutes(deps.ledger));
  return app;
}
