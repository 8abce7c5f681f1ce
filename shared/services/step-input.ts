/**
 * What a step is called with: its input with every `"{% … %}"` expression evaluated over `$objective` and
 * `$outputs` (the outputs of every step upstream of it, transitively), and, for an agent's brief, the outputs of
 * the steps it directly waits for.
 */
import { upstreamOutputs } from '../engine/scheduling.ts';
import { type ExpressionBindings, evaluateExpression, isExpression } from '../plan/expressions.ts';
import { buildGraph, upstreamClosure } from '../plan/graph.ts';
import type { Plan } from '../plan/schema.ts';
import type { StepRecord } from '../ports/store.ts';

export interface StepContext {
  /** `$outputs`: every upstream step (transitively) that finished; skipped ones are null. */
  readonly outputs: Record<string, unknown>;
  /** The outputs of the steps the step directly waits for (its record's `upstream`), for an agent's brief. */
  readonly direct: Record<string, unknown>;
}

export function stepContext(plan: Pick<Plan, 'steps'>, step: StepRecord, steps: readonly StepRecord[]): StepContext {
  const byId = new Map(steps.map((s) => [s.stepId, s]));
  const graph = buildGraph(plan.steps);
  const closure = [...upstreamClosure(graph, step.stepId)].filter((id) => graph.has(id) && !graph.isGroup(id));
  return { outputs: upstreamOutputs(closure, byId), direct: upstreamOutputs(step.upstream, byId) };
}

/**
 * Evaluates every expression inside a step's input. As in Step Functions' JSONata fields, an expression that yields
 * nothing drops its object field (and becomes null inside an array). A step without input is called with `{}`.
 */
export async function evaluateStepInput(input: unknown, bindings: ExpressionBindings): Promise<unknown> {
  if (input === undefined) return {};
  const value = await evaluateValue(input, bindings);
  return value === undefined ? {} : value;
}

async function evaluateValue(value: unknown, bindings: ExpressionBindings): Promise<unknown> {
  if (typeof value === 'string') return isExpression(value) ? toJson(await evaluateExpression(value, bindings)) : value;
  if (Array.isArray(value)) {
    const items = await Promise.all(value.map((item) => evaluateValue(item, bindings)));
    return items.map((item) => (item === undefined ? null : item));
  }
  if (typeof value === 'object' && value !== null) {
    const entries = await Promise.all(
      Object.entries(value).map(async ([key, item]) => [key, await evaluateValue(item, bindings)] as const),
    );
    const result: Record<string, unknown> = {};
    for (const [key, item] of entries) if (item !== undefined) result[key] = item;
    return result;
  }
  return value;
}

/**
 * JSONata results can be sequences (arrays with extra flags) or carry functions; a JSON round trip leaves plain data
 * that validates and stores like any other value.
 */
function toJson(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return text === undefined ? undefined : (JSON.parse(text) as unknown);
}
