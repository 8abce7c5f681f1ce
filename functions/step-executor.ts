/**
 * The step-executor Lambda: `{ runId, stepId, generation, attempt }` in (the step state machine's ExecuteStep task),
 * `{ ok: true } | { ok: false, error: { code, message, retryable } }` out. Capability failures come back as data;
 * only infrastructure failures throw (the state machine catches them as E_EXECUTOR).
 *
 * Environment: CAIRN_TABLE_NAME (required), CAIRN_CATALOG_FILE or CAIRN_CATALOG (default: the bundled demo catalog),
 * CAIRN_BINDINGS (target → binding JSON, see shared/capabilities/registry.ts; built by shared/adapters/bindings.ts), CAIRN_BUILTINS (builtin packs,
 * `demo,conformance` or `none`; default `demo`, so the demo catalog runs on a fresh deploy; configured bindings
 * win), CAIRN_MAX_OUTPUT_BYTES, CAIRN_IDEMPOTENCY_TTL_SECONDS.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { z } from 'zod';
import { createDynamoStore } from '../shared/adapters/aws/dynamo-store.ts';
import { createRuntimeRegistry } from '../shared/adapters/bindings.ts';
import { catalogFromEnv } from '../shared/adapters/catalog-from-env.ts';
import { parseBuiltinPacks } from '../shared/capabilities/runtime-registry.ts';
import { ValidationError } from '../shared/errors.ts';
import {
  createStepExecutor,
  DEFAULT_IDEMPOTENCY_TTL_SECONDS,
  DEFAULT_MAX_OUTPUT_BYTES,
  type ExecuteResult,
  type StepExecutor,
} from '../shared/services/step-executor.ts';
import { observe, observedRegistry } from './observability.ts';

export const executeStepPayloadSchema = z.object({
  runId: z.string().min(1),
  stepId: z.string().min(1),
  generation: z.number().int().min(0),
  attempt: z.number().int().min(1),
});
export type ExecuteStepPayload = z.infer<typeof executeStepPayloadSchema>;

export interface StepExecutorHandlerDeps {
  readonly executor: StepExecutor;
}

export function createHandler(deps: StepExecutorHandlerDeps) {
  return async (event: unknown): Promise<ExecuteResult> => {
    const parsed = executeStepPayloadSchema.safeParse(event);
    if (!parsed.success) {
      const errors = parsed.error.issues.map((i) => ({
        code: 'E_PAYLOAD',
        path: i.path.map((p) => `/${String(p)}`).join(''),
        message: i.message,
      }));
      throw new ValidationError(
        `step-executor payload is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
        errors,
      );
    }
    return deps.executor.execute(parsed.data);
  };
}

const positiveInt = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
};

// Re-exported for the handler's tests: the one catalogFromEnv every handler uses.
export { catalogFromEnv };

export function executorFromEnv(env: NodeJS.ProcessEnv): StepExecutor {
  const tableName = env.CAIRN_TABLE_NAME;
  if (!tableName) throw new Error('CAIRN_TABLE_NAME is not set');
  const catalog = catalogFromEnv(env);
  const clock = () => new Date();
  return createStepExecutor({
    store: createDynamoStore({ client: new DynamoDBClient({}), tableName }),
    catalog,
    registry: observedRegistry(
      createRuntimeRegistry({
        catalog,
        bindingsJson: env.CAIRN_BINDINGS,
        builtins: parseBuiltinPacks(env.CAIRN_BUILTINS, ['demo']),
      }),
    ),
    clock,
    config: {
      maxOutputBytes: positiveInt(env.CAIRN_MAX_OUTPUT_BYTES, DEFAULT_MAX_OUTPUT_BYTES, 'CAIRN_MAX_OUTPUT_BYTES'),
      idempotencyTtlSeconds: positiveInt(
        env.CAIRN_IDEMPOTENCY_TTL_SECONDS,
        DEFAULT_IDEMPOTENCY_TTL_SECONDS,
        'CAIRN_IDEMPOTENCY_TTL_SECONDS',
      ),
    },
  });
}

/** Built on the first invocation, so importing this module needs no environment. */
export function defaultDeps(env: NodeJS.ProcessEnv = process.env): StepExecutorHandlerDeps {
  let executor: StepExecutor | undefined;
  return {
    executor: {
      execute: async (request) => {
        executor ??= executorFromEnv(env);
        return executor.execute(request);
      },
    },
  };
}

export const handler = observe('step-executor', createHandler(defaultDeps()));
