/**
 * Expressions the coordinator evaluates: a step's `when` and evaluated `input` when it is claimed (checked against
 * the capability's inputSchema before anything is called), and `successCriteria.assert` when its result is
 * verified. Bindings: `$objective`, `$outputs` (every upstream step, transitively) and, in assertions, `$output`.
 */
import { afterInputCheck, afterWhen, type ClaimPreparation, inputUnevaluated } from '../engine/claim.ts';
import type { AssertionResult } from '../engine/verify.ts';
import { clipMessage } from '../plan/bounded-text.ts';
import { createInProcessEvaluator } from '../plan/expression-limits.ts';
import type { ExpressionBindings } from '../plan/expressions.ts';
import type { PlanStep } from '../plan/schema.ts';
import type { ExpressionEvaluator } from '../ports/expressions.ts';
import type { Interpreter } from './interpreter.ts';
import { evaluateStepInput } from './step-input.ts';

let inProcess: ExpressionEvaluator | undefined;

/** The evaluator of a service's dependencies; without one (tests), this thread under the cooperative bounds. */
export function evaluatorOf(deps: { readonly expressions?: ExpressionEvaluator | undefined }): ExpressionEvaluator {
  if (deps.expressions !== undefined) return deps.expressions;
  inProcess ??= createInProcessEvaluator();
  return inProcess;
}

/** Evaluates `when` and the input of a step being claimed, and checks the input against the capability contract. */
export async function prepareClaim(
  ctx: Interpreter,
  planStep: PlanStep,
  bindings: ExpressionBindings,
): Promise<ClaimPreparation> {
  const evaluator = evaluatorOf(ctx.deps);
  if (planStep.when !== undefined) {
    const [when] = await evaluator.evaluate({ sources: [planStep.when], bindings });
    const stopped = afterWhen(planStep, when);
    if (stopped !== undefined) return stopped;
  }
  let input: unknown;
  try {
    input = await evaluateStepInput(planStep.input, bindings, evaluator);
  } catch (error) {
    return inputUnevaluated(planStep, error);
  }
  return afterInputCheck(planStep, input, ctx.deps.catalog.validateInput(planStep.target ?? '', input));
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
