/**
 * The API Lambda: the Hono app behind API Gateway (HTTP API), through hono/aws-lambda. The same app runs locally on
 * @hono/node-server. Deployed, API Gateway's JWT authorizer has already checked the caller, so the app only reads
 * the `sub` claim; with CAIRN_API_TOKEN set it checks that static bearer token instead.
 *
 * Environment: CAIRN_TABLE_NAME, CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN, CAIRN_EVENT_BUS_NAME (required);
 * CAIRN_CATALOG_FILE or CAIRN_CATALOG, CAIRN_MAX_STEPS, CAIRN_MAX_DEPTH, CAIRN_PLANNER_MODEL_ID (or CAIRN_MODEL_ID),
 * CAIRN_API_TOKEN, CAIRN_CONSOLE_DIR (the console files in the bundle), and the coordinator's settings (cancellation
 * runs the coordinator's cancelRun in this process, a manual replan the replanner with CAIRN_MAX_REPLANS, an
 * invalidation the invalidator). Webhooks:
 * CAIRN_WEBHOOK_SECRET_PREFIX (Secrets Manager names `<prefix>/<source>`; absent: every delivery is refused) and
 * CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS (default 300).
 */
import { randomUUID } from 'node:crypto';
import { handle } from 'hono/aws-lambda';
import { createEventBridgePublisher } from '../shared/adapters/aws/eventbridge-publisher.ts';
import { sfnExecutionsFromEnv } from '../shared/adapters/aws/sfn-executions.ts';
import { createStoreReplayGuard } from '../shared/adapters/aws/webhook-replay-guard.ts';
import { webhookSecretsFromEnv } from '../shared/adapters/aws/webhook-secrets.ts';
import { type ApiDeps, createApp } from '../shared/api/app.ts';
import type { AuthConfig } from '../shared/api/auth.ts';
import { catalogFromEnv, type Env, limitsFromEnv, required, storeFromEnv } from '../shared/api/lambda-support.ts';
import { replayWindowFromEnv } from '../shared/ports/webhooks.ts';
import { createInvalidator } from '../shared/services/invalidator.ts';
import { coordinatorFromEnv } from './coordinator.ts';
import { invalidatorDepsFromEnv } from './invalidator.ts';
import { observability, observe } from './observability.ts';
import { plannerFromEnv } from './planner.ts';
import { replannerFromEnv } from './replanner.ts';

export type ApiHandler = ReturnType<typeof createHandler>;

export function createHandler(deps: ApiDeps) {
  return handle(createApp(deps));
}

export const authFromEnv = (env: Env): AuthConfig =>
  env.CAIRN_API_TOKEN ? { kind: 'token', token: env.CAIRN_API_TOKEN } : { kind: 'gateway' };

export function defaultDeps(env: Env = process.env): ApiDeps {
  const catalog = catalogFromEnv(env);
  const limits = limitsFromEnv(env);
  const coordinator = coordinatorFromEnv(env, observability().sink);
  // A person's replan runs here, in the request, like a cancellation: the same service the Replanner Lambda runs.
  const replanner = replannerFromEnv(env, observability().sink);
  // Invalidation on request runs here too: the same service the Invalidator Lambda runs for ResourceChanged.
  const invalidator = createInvalidator(invalidatorDepsFromEnv(env));
  const store = storeFromEnv(env);
  const clock = () => new Date();
  return {
    store,
    executions: sfnExecutionsFromEnv(env),
    catalog,
    planner: plannerFromEnv(env, catalog, limits),
    limits,
    cancelRun: async (runId) => {
      await coordinator.cancelRun(runId);
    },
    replanRun: (request) => replanner.replanRun(request),
    invalidateStep: (request) => invalidator.invalidateStep(request),
    auth: authFromEnv(env),
    clock,
    newId: randomUUID,
    events: createEventBridgePublisher({ eventBusName: required(env, 'CAIRN_EVENT_BUS_NAME') }),
    webhooks: {
      secrets: webhookSecretsFromEnv(env),
      replayWindowSeconds: replayWindowFromEnv(env),
      replayGuard: createStoreReplayGuard(store, clock),
    },
  };
}

// Built on the first invocation, so importing createHandler (tests, the embedded runtime) reads no environment.
let built: ApiHandler | undefined;
export const handler: ApiHandler = observe('api', (event, lambdaContext) => {
  built ??= createHandler(defaultDeps());
  return built(event, lambdaContext);
});
