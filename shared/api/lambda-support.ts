/**
 * What the Lambda entries of the API, the planner and the validator share: deployment configuration read from the
 * environment (the same names are CDK context and `npm start` flags) and task payload parsing.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { z } from 'zod';
import { createDynamoStore } from '../adapters/aws/dynamo-store.ts';
import { ValidationError } from '../errors.ts';
import { DEFAULT_LIMITS, type PlanLimits } from '../plan/validate.ts';
import type { Store } from '../ports/store.ts';

export type Env = Readonly<Record<string, string | undefined>>;

/** A required variable; a missing one fails the cold start loudly instead of the first request quietly. */
export function required(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

function count(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

/** CAIRN_MAX_STEPS and CAIRN_MAX_DEPTH; the plan contract's defaults when absent. */
export const limitsFromEnv = (env: Env): PlanLimits => ({
  maxSteps: count(env, 'CAIRN_MAX_STEPS', DEFAULT_LIMITS.maxSteps),
  maxDepth: count(env, 'CAIRN_MAX_DEPTH', DEFAULT_LIMITS.maxDepth),
});

/** The catalog a deployment runs with: CAIRN_CATALOG_FILE, else CAIRN_CATALOG, else the bundled demo catalog. */
export { catalogFromEnv } from '../adapters/catalog-from-env.ts';

/** The planner model id: CAIRN_PLANNER_MODEL_ID, or CAIRN_MODEL_ID as the CDK functions construct names it. */
export const plannerModelId = (env: Env): string | undefined =>
  env.CAIRN_PLANNER_MODEL_ID || env.CAIRN_MODEL_ID || undefined;

export const storeFromEnv = (env: Env): Store =>
  createDynamoStore({ client: new DynamoDBClient({}), tableName: required(env, 'CAIRN_TABLE_NAME') });

/** The payload of the run machine's PlanRun and ValidatePlan tasks: only the id travels through Step Functions. */
export const runTaskPayload = z.object({ runId: z.string().min(1) });

/** Parses a task payload; a bad one is a ValidationError (a CairnError the ASL's Catch can route). */
export function parsePayload<S extends z.ZodType>(schema: S, event: unknown): z.infer<S> {
  const parsed = schema.safeParse(event);
  if (parsed.success) return parsed.data;
  const errors = parsed.error.issues.map((i) => ({
    code: 'E_FIELD',
    path: i.path.map((p) => `/${String(p)}`).join(''),
    message: i.message,
  }));
  throw new ValidationError('invalid task payload', errors);
}
