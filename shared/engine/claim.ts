/**
 * Whether a claimed step runs, is skipped or fails before anything is called, from what its expressions gave: the
 * `when` condition's outcome, the evaluated input (or why it could not be evaluated) and the input's check against
 * the capability's inputSchema. Pure: the step service evaluates (in the sandbox) and passes the outcomes in.
 */
import { ExpressionLimitError, isExpressionLimitError } from '../errors.ts';
import { clipMessage, joinIssues, messageOf } from '../plan/bounded-text.ts';
import type { EvaluationOutcome } from '../plan/expression-limits.ts';
import { containsExpression } from '../plan/expressions.ts';
import type { PlanStep, StepError } from '../plan/schema.ts';
import { clipText } from './replan/step-definition.ts';

export const CLAIM_ERROR_CODES = {
  condition: 'E_WHEN_EXPRESSION',
  input: 'E_INPUT_EXPRESSION',
  inputSchema: 'E_INPUT_SCHEMA',
  unknownStep: 'E_STEP_NOT_FOUND',
  // A bound of the expression sandbox was hit (time, depth, size, memory); the same code as at verification.
  expressionLimit: ExpressionLimitError.code,
} as const;

export type ClaimPreparation =
  | { readonly outcome: 'run'; readonly input: unknown }
  | { readonly outcome: 'skip'; readonly reason: string }
  | { readonly outcome: 'fail'; readonly error: StepError };

/** Whether claiming a step evaluates any expression (its `when` or anything in its input). */
export const claimEvaluates = (planStep: PlanStep): boolean =>
  planStep.when !== undefined || containsExpression(planStep.input);

/**
 * A claim's failure, its message bounded (plan/bounded-text.ts): the text comes from the plan's expressions and
 * the input they build (`$error($pad("", 9999999))`), and it is stored on the step and in the run's evidence.
 */
const fail = (code: string, message: string, details?: StepError['details']): ClaimPreparation => {
  const bounded = clipMessage(message);
  return {
    outcome: 'fail',
    error:
      details === undefined
        ? { code, message: bounded, retryable: false }
        : { code, message: bounded, retryable: false, details },
  };
};

/** JSONata's notion of truth ($boolean): empty strings, zero, empty arrays and objects, null and nothing are false. */
export function isTruthy(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'string') return value.length > 0;
  if (typeof value === 'function') return false;
  if (Array.isArray(value)) return value.some(isTruthy);
  return Object.keys(value).length > 0;
}

/**
 * A skip's reason names the `when` expression, which a plan may make as long as it likes; the reason travels in
 * StepSkipped and the step's trace, so a long one is clipped there (the plan keeps it whole).
 */
const WHEN_IN_REASON_CHARS = 500;

/** What the `when` outcome decides: a failure or a skip, or undefined when the step goes on to its input. */
export function afterWhen(planStep: PlanStep, when: EvaluationOutcome | undefined): ClaimPreparation | undefined {
  if (when === undefined || !when.ok)
    return fail(
      when?.limit ? CLAIM_ERROR_CODES.expressionLimit : CLAIM_ERROR_CODES.condition,
      `the when condition of ${planStep.id} failed: ${when?.message ?? 'no outcome'}`,
    );
  if (isTruthy(when.value)) return undefined;
  const shown = String(planStep.when);
  const clipped = shown.length > WHEN_IN_REASON_CHARS ? clipText(shown, WHEN_IN_REASON_CHARS) : shown;
  return { outcome: 'skip', reason: `when ${clipped} is false` };
}

/** The input could not be evaluated: a bound of the sandbox, or the expression's own error. */
export const inputUnevaluated = (planStep: PlanStep, error: unknown): ClaimPreparation =>
  fail(
    isExpressionLimitError(error) ? CLAIM_ERROR_CODES.expressionLimit : CLAIM_ERROR_CODES.input,
    `the input of ${planStep.id} cannot be evaluated: ${messageOf(error)}`,
  );

/** The evaluated input runs when it matches the capability's inputSchema. */
export function afterInputCheck(
  planStep: PlanStep,
  input: unknown,
  check: { readonly ok: true } | { readonly ok: false; readonly errors: readonly string[] },
): ClaimPreparation {
  if (check.ok) return { outcome: 'run', input };
  const target = planStep.target ?? '';
  return fail(
    CLAIM_ERROR_CODES.inputSchema,
    `the input of ${planStep.id} does not match the inputSchema of ${target}: ${joinIssues(check.errors)}`,
    { errors: [...check.errors] },
  );
}
