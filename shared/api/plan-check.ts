/**
 * Plan validation as the API answers it: an invalid plan is a 422 that carries its issues, both in the error
 * envelope's terms (`error.code` E_INVALID_PLAN, the message counting them all) and in the validator's (`valid:
 * false, errors`: the first 100, then one E_MORE_ISSUES counting the rest).
 */
import type { Catalog } from '../plan/catalog.ts';
import { issue, issueTotal, type PlanIssue } from '../plan/issues.ts';
import type { Plan } from '../plan/schema.ts';
import { type PlanLimits, type ValidationResult, validate, validateGenerated } from '../plan/validate.ts';
import { ApiError, errorBody } from './errors.ts';

export const INVALID_PLAN = 'E_INVALID_PLAN';

const message = (errors: readonly PlanIssue[]): string => {
  const total = issueTotal(errors);
  return `the plan is invalid (${total} ${total === 1 ? 'issue' : 'issues'})`;
};

export const invalidPlanBody = (errors: readonly PlanIssue[]) => ({
  ...errorBody(INVALID_PLAN, message(errors)),
  valid: false as const,
  errors,
});

/**
 * A plan with more steps than the limit is refused for its size alone, before its steps are checked one by one:
 * validation runs on the API's event loop, and checking thousands of steps (every expression parsed) would let any
 * client stall it for seconds (bench:hostile) for a plan that cannot run anyway.
 */
function tooLarge(plan: unknown, limits: PlanLimits): ValidationResult | undefined {
  const steps = typeof plan === 'object' && plan !== null ? (plan as { steps?: unknown }).steps : undefined;
  if (!Array.isArray(steps) || steps.length <= limits.maxSteps) return undefined;
  const message = `${steps.length} steps exceed the limit of ${limits.maxSteps}; the steps were not checked`;
  return { valid: false, errors: [issue('E_TOO_MANY_STEPS', '/steps', message)] };
}

export function checkPlan(plan: unknown, catalog: Catalog, limits: PlanLimits, generated: boolean): ValidationResult {
  return (
    tooLarge(plan, limits) ?? (generated ? validateGenerated(plan, catalog, limits) : validate(plan, catalog, limits))
  );
}

/** A plan from a client, validated as untrusted; throws the 422 when it is not fit to run. */
export function validateUntrusted(plan: unknown, catalog: Catalog, limits: PlanLimits): Plan {
  const result = tooLarge(plan, limits) ?? validateGenerated(plan, catalog, limits);
  if (result.valid) return result.plan;
  throw new ApiError(422, INVALID_PLAN, message(result.errors), { extra: { valid: false, errors: result.errors } });
}
