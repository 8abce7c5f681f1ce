/**
 * Plan validation as the API answers it: an invalid plan is a 422 that carries every issue, both in the error
 * envelope's terms (`error.code` E_INVALID_PLAN) and in the validator's (`valid: false, errors`).
 */
import type { Catalog } from '../plan/catalog.ts';
import type { PlanIssue } from '../plan/issues.ts';
import type { Plan } from '../plan/schema.ts';
import { type PlanLimits, type ValidationResult, validate, validateGenerated } from '../plan/validate.ts';
import { ApiError, errorBody } from './errors.ts';

export const INVALID_PLAN = 'E_INVALID_PLAN';

const message = (errors: readonly PlanIssue[]): string =>
  `the plan is invalid (${errors.length} ${errors.length === 1 ? 'issue' : 'issues'})`;

export const invalidPlanBody = (errors: readonly PlanIssue[]) => ({
  ...errorBody(INVALID_PLAN, message(errors)),
  valid: false as const,
  errors,
});

export function checkPlan(plan: unknown, catalog: Catalog, limits: PlanLimits, generated: boolean): ValidationResult {
  return generated ? validateGenerated(plan, catalog, limits) : validate(plan, catalog, limits);
}

/** A plan from a client, validated as untrusted; throws the 422 when it is not fit to run. */
export function validateUntrusted(plan: unknown, catalog: Catalog, limits: PlanLimits): Plan {
  const result = validateGenerated(plan, catalog, limits);
  if (result.valid) return result.plan;
  throw new ApiError(422, INVALID_PLAN, message(result.errors), { extra: { valid: false, errors: result.errors } });
}
