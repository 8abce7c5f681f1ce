/**
 * The coordinator Lambda: every coordinator task of the run and step state machines sends `{ action, ...ids }`;
 * the payload is parsed (a zod union on `action`) and dispatched to the coordinator service. A bad payload is a
 * ValidationError, a name the state machines' Catch can route.
 *
 * Environment: CAIRN_TABLE_NAME, CAIRN_RUN_MACHINE_ARN, CAIRN_STEP_MACHINE_ARN, CAIRN_EVENT_BUS_NAME (required);
 * CAIRN_CATALOG_FILE or CAIRN_CATALOG (default: the bundled demo catalog), CAIRN_RUN_DEADLINE_SECONDS (default 86400),
 * CAIRN_RETRY_BASE_SECONDS (default 1), CAIRN_RETRY_CAP_SECONDS (default 60), CAIRN_MAX_STEPS, CAIRN_MAX_DEPTH,
 * CAIRN_TRACE_RETENTION (`last` or `full`; default `last`), CAIRN_MAX_REPLANS (default 3; 0 turns replanning off).
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { z } from 'zod';
import { createDynamoStore } from '../shared/adapters/aws/dynamo-store.ts';
import { sfnExecutionsFromEnv } from '../shared/adapters/aws/sfn-executions.ts';
import { catalogFromEnv, limitsFromEnv, required } from '../shared/api/lambda-support.ts';
import { DEFAULT_MAX_REPLANS } from '../shared/engine/replan.ts';
import { DEFAULT_RETRY_BASE_SECONDS, DEFAULT_RETRY_CAP_SECONDS } from '../shared/engine/retry.ts';
import { ValidationError } from '../shared/errors.ts';
import type { MetricsSink } from '../shared/ports/metrics.ts';
import { type Coordinator, type CoordinatorDeps, createCoordinator } from '../shared/services/coordinator.ts';
import { observability, observe } from './observability.ts';

type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_RUN_DEADLINE_SECONDS = 86_400;

const id = z.string().min(1);
const stepRef = { runId: id, stepId: id, generation: z.number().int().min(0) };
const attempt = z.number().int().min(1);
const stepError = z.object({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean().optional(),
  details: z.json().optional(),
});
/** Step Functions passes `null` for what JSONPath cannot leave out. */
const optional = <S extends z.ZodType>(schema: S) => schema.nullish();

/** A person's answer to a gate or review, as the approval API sends it through the task token. */
export const humanDecisionSchema = z.object({
  decision: z.enum(['approve', 'reject', 'edit']),
  output: z.json().optional(),
  comment: optional(z.string()),
  by: optional(z.string()),
});

export const coordinatorPayloadSchema = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('rejectPlan'),
    runId: id,
    errors: z.array(z.object({ code: z.string(), path: z.string(), message: z.string() })),
  }),
  z.object({ action: z.literal('failRun'), runId: id, error: z.unknown() }),
  z.object({ action: z.literal('startRun'), runId: id }),
  z.object({ action: z.literal('awaitRun'), runId: id, taskToken: id }),
  z.object({
    action: z.literal('finalizeRun'),
    runId: id,
    timedOut: optional(z.unknown()),
    error: optional(z.unknown()),
    execution: optional(z.string()),
  }),
  z.object({ action: z.literal('recordFailure'), ...stepRef, attempt: optional(attempt), error: stepError }),
  z.object({
    action: z.literal('requestApproval'),
    ...stepRef,
    kind: z.enum(['approval', 'review']),
    taskToken: id,
  }),
  z.object({ action: z.literal('expireApproval'), ...stepRef, kind: optional(z.enum(['approval', 'review'])) }),
  z.object({ action: z.literal('cancelRun'), runId: id }),
]);
export type CoordinatorPayload = z.infer<typeof coordinatorPayloadSchema>;

export interface CoordinatorHandlerDeps {
  readonly coordinator: Coordinator;
}

const orUndefined = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

function parse(event: unknown): CoordinatorPayload {
  const parsed = coordinatorPayloadSchema.safeParse(event);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.map((i) => ({
    code: 'E_PAYLOAD',
    path: i.path.map((p) => `/${String(p)}`).join(''),
    message: i.message,
  }));
  throw new ValidationError(
    `coordinator payload is invalid: ${errors.map((e) => `${e.path || '(root)'} ${e.message}`).join('; ')}`,
    errors,
  );
}

export function createHandler(deps: CoordinatorHandlerDeps) {
  const { coordinator } = deps;
  return async (event: unknown): Promise<unknown> => {
    const payload = parse(event);
    switch (payload.action) {
      case 'rejectPlan':
        return coordinator.rejectPlan(payload);
      case 'failRun':
        return coordinator.failRun(payload);
      case 'startRun':
        return coordinator.startRun(payload);
      case 'awaitRun':
        return coordinator.awaitRun(payload);
      case 'finalizeRun':
        return coordinator.finalizeRun(payload);
      case 'recordFailure':
        return coordinator.recordFailure({ ...payload, attempt: orUndefined(payload.attempt) });
      case 'requestApproval':
        return coordinator.requestApproval(payload);
      case 'expireApproval':
        return coordinator.expireApproval({ ...payload, kind: orUndefined(payload.kind) });
      case 'cancelRun':
        return coordinator.cancelRun(payload.runId);
    }
  };
}

function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

/** The coordinator's configuration from the environment (the same names as CDK context and `npm start` flags). */
export function coordinatorConfigFromEnv(env: Env): CoordinatorDeps['config'] {
  const retention = env.CAIRN_TRACE_RETENTION ?? 'last';
  if (retention !== 'last' && retention !== 'full')
    throw new Error(`CAIRN_TRACE_RETENTION must be "last" or "full", got "${retention}"`);
  const deadline = positiveNumber(env, 'CAIRN_RUN_DEADLINE_SECONDS', DEFAULT_RUN_DEADLINE_SECONDS);
  return {
    runDeadlineSeconds: Math.max(1, Math.floor(deadline)),
    retryBaseSeconds: positiveNumber(env, 'CAIRN_RETRY_BASE_SECONDS', DEFAULT_RETRY_BASE_SECONDS),
    retryCapSeconds: positiveNumber(env, 'CAIRN_RETRY_CAP_SECONDS', DEFAULT_RETRY_CAP_SECONDS),
    ...limitsFromEnv(env),
    traceRetention: retention,
    maxReplans: Math.floor(positiveNumber(env, 'CAIRN_MAX_REPLANS', DEFAULT_MAX_REPLANS)),
  };
}

/** The coordinator's dependencies with AWS adapters, from the environment (the step executor shares them). */
export function coordinatorDepsFromEnv(env: Env, metrics?: MetricsSink): CoordinatorDeps {
  return {
    store: createDynamoStore({ client: new DynamoDBClient({}), tableName: required(env, 'CAIRN_TABLE_NAME') }),
    executions: sfnExecutionsFromEnv(env),
    catalog: catalogFromEnv(env),
    clock: () => new Date(),
    newId: randomUUID,
    config: coordinatorConfigFromEnv(env),
    ...(metrics === undefined ? {} : { metrics }),
  };
}

/** The coordinator with AWS adapters, built from the environment; `metrics` receives its operational metrics. */
export function coordinatorFromEnv(env: Env, metrics?: MetricsSink): Coordinator {
  return createCoordinator(coordinatorDepsFromEnv(env, metrics));
}

/** Built on the first invocation, so importing this module (tests, the embedded runtime) reads no environment. */
export function defaultDeps(env: Env = process.env): CoordinatorHandlerDeps {
  let built: Coordinator | undefined;
  const coordinator = new Proxy({} as Coordinator, {
    get: (_target, property) => {
      built ??= coordinatorFromEnv(env, observability().sink);
      return Reflect.get(built, property);
    },
  });
  return { coordinator };
}

export const handler = observe('coordinator', createHandler(defaultDeps()));
