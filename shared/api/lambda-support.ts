/**
 * What the run machine's task entries (planner, validator) share: task payload parsing. Their settings and
 * dependencies come from the composition root (functions/root.ts → shared/composition/root.ts).
 */
import { z } from 'zod';
import { awsPlace } from '../adapters/aws/place.ts';
import { type Env, settingsFromEnv } from '../config/settings.ts';
import { ValidationError } from '../errors.ts';
import type { Store } from '../ports/store.ts';

export type { Env };

/**
 * A required variable; a missing one fails the cold start loudly instead of the first request quietly. Kept for
 * entries that do not take the root yet: the root's adapters use requireSetting (shared/config/settings.ts).
 */
export function required(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') throw new Error(`${name} is not set`);
  return value;
}

/** The deployed store, as the root builds it; for entries that do not take the root yet (use lambdaRoot). */
export const storeFromEnv = (env: Env): Store => awsPlace(settingsFromEnv(env)).store();

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
