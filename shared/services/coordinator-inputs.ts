/**
 * Expressions the coordinator evaluates: a step's `when` and evaluated `input` when it is claimed (checked against
 * the capability's inputSchema before anything is called), and `successCriteria.assert` when its result is
 * verified. Bindings: `$objective`, `$outputs` (every upstream step, transitively) and, in assertions, `$output`.
 */
import { clipText } from '../engine/replan/step-definition.ts';
import type { AssertionResult, ContractResult } from '../engine/verify.ts';
import { ExpressionLimitError, isExpressionLimitError } from '../errors.ts';
import { clipMessage, joinIssues, messageOf } from '../plan/bounded-text.ts';
import { contractIssues, contractValidator } from '../plan/contracts.ts';
import { createInProcessEvaluator } from '../plan/expression-limits.ts';
import { containsExpression, type ExpressionBindings } from '../plan/expressions.ts';
import type { PlanStep, StepError } from '../plan/schema.ts';
import type { ExpressionEvaluator } from '../ports/expressions.ts';
import type { Interpreter } from './interpreter.ts';
import { evaluateStepInput } from './step-input.ts';

export const CLAIM_ERROR_CODES = {
  condition: 'E_WHEN_EXPRESSION',
  input: 'E_INPUT_EXPRESSION',
  inputSchema: 'E_INPUT_SCHEMA',
  unknownStep: 'E_STEP_NOT_FOUND',
  // A bound of the expression sandbox was hit (time, depth, size, memory); the same code as at verification.
  expressionLimit: ExpressionLimitError.code,
} as const;

let inProcess: ExpressionEvaluator | undefined;

/** The evaluator of a service's dependencies; without one (tests), this thread under the cooperative bounds. */
export function evaluatorOf(deps: { readonly expressions?: ExpressionEvaluator | undefined }): ExpressionEvaluator {
  if (deps.expressions !== undefined) return deps.expressions;
  inProcess ??= createInProcessEvaluator();
  return inProcess;
}

export type ClaimPreparation =
  | { readonly outcome: 'run'; readonly input: unknown }
  | { readonly outcome: 'skip'; readonly reason: string }
  | { readonly outcome: 'fail'; readonly error: StepError };

/**
 * A claim's failure, its message bounded (plan/bounded-text.ts): the text comes from the plan's expressions and
 * the input they build (`$error($pad("", 9999999))`), and it is stored on the step and in the run's evidence.
 */
const permanent = (code: string, message: string, details?: StepError['details']): StepError => {
  const bounded = clipMessage(message);
  return details === undefined
    ? { code, message: bounded, retryable: false }
    : { code, message: bounded, retryable: false, details };
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

/** Whether claiming a step evaluates any expression (its `when` or anything in its input). */
export const claimEvaluates = (planStep: PlanStep): boolean =>
  planStep.when !== undefined || containsExpression(planStep.input);

/** Evaluates `when` and the input of a step being claimed, and checks the input against the capability contract. */
export async function prepareClaim(
  ctx: Interpreter,
  planStep: PlanStep,
  bindings: ExpressionBindings,
): Promise<ClaimPreparation> {
  const evaluator = evaluatorOf(ctx.deps);
  if (planStep.when !== undefined) {
    const [when] = await evaluator.evaluate({ sources: [planStep.when], bindings });
    if (when === undefined || !when.ok) {
      const message = when?.message ?? 'no outcome';
      return {
        outcome: 'fail',
        error: permanent(
          when?.limit ? CLAIM_ERROR_CODES.expressionLimit : CLAIM_ERROR_CODES.condition,
          `the when condition of ${planStep.id} failed: ${message}`,
        ),
      };
    }
    if (!isTruthy(when.value)) return { outcome: 'skip', reason: `when ${whenInReason(planStep.when)} is false` };
  }
  let input: unknown;
  try {
    input = await evaluateStepInput(planStep.input, bindings, evaluator);
  } catch (error) {
    return {
      outcome: 'fail',
      error: permanent(
        isExpressionLimitError(error) ? CLAIM_ERROR_CODES.expressionLimit : CLAIM_ERROR_CODES.input,
        `the input of ${planStep.id} cannot be evaluated: ${messageOf(error)}`,
      ),
    };
  }
  const target = planStep.target ?? '';
  const check = ctx.deps.catalog.validateInput(target, input);
  if (!check.ok)
    return {
      outcome: 'fail',
      error: permanent(
        CLAIM_ERROR_CODES.inputSchema,
        `the input of ${planStep.id} does not match the inputSchema of ${target}: ${joinIssues(check.errors)}`,
        { errors: [...check.errors] },
      ),
    };
  return { outcome: 'run', input };
}

/** The result of `successCriteria.assert` over a candidate output; undefined when the step has no assertion. */
export async function evaluateAssertion(
  evaluator: ExpressionEvaluator,
  planStep: PlanStep,
  bindings: ExpressionBindings,
  output: unknown,
): Promise<AssertionResult | undefined> {
  const assertion = planStep.successCriteria?.assert;
  if (assertion === undefined) return undefined;
  const [outcome] = await evaluator.evaluate({ sources: [assertion], bindings: { ...bindings, output } });
  if (outcome === undefined) return { ok: false, message: 'no outcome' };
  return outcome.ok
    ? { ok: true, value: outcome.value }
    : { ok: false, message: clipMessage(outcome.message), limit: outcome.limit };
}

/** The output against `successCriteria.outputSchema`; undefined when the step has none. */
export function checkCriteriaSchema(planStep: PlanStep, output: unknown): ContractResult | undefined {
  const schema = planStep.successCriteria?.outputSchema;
  if (schema === undefined) return undefined;
  const validateFn = contractValidator(schema);
  if (validateFn(output)) return { ok: true };
  return { ok: false, errors: contractIssues(validateFn.errors) };
}

/**
 * A skip's reason names the `when` expression, which a plan may make as long as it likes; the reason travels in
 * StepSkipped and the step's trace, so a long one is clipped there (the plan keeps it whole).
 */
const WHEN_IN_REASON_CHARS = 500;
const whenInReason = (when: string | undefined): string =>
  when !== undefined && when.length > WHEN_IN_REASON_CHARS ? clipText(when, WHEN_IN_REASON_CHARS) : String(when);
