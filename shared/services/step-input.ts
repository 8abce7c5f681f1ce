/**
 * What a step is called with: its input with every `"{% … %}"` expression evaluated over `$objective` and
 * `$outputs` (the outputs of every step upstream of it, transitively), and, for an agent's brief, the outputs of
 * the steps it directly waits for.
 */
import { upstreamOutputs } from '../engine/scheduling.ts';
import { type ExpressionBindings, evaluateExpression, isExpression } from '../plan/expressions.ts';
import { buildGraph, type PlanGraph, upstreamClosure } from '../plan/graph.ts';
import type { Plan } from '../plan/schema.ts';
import type { StepRecord, Store } from '../ports/store.ts';

export interface StepContext {
  /** `$outputs`: every upstream step (transitively) that finished; skipped ones are null. */
  readonly outputs: Record<string, unknown>;
  /** The outputs of the steps the step directly waits for (its record's `upstream`), for an agent's brief. */
  readonly direct: Record<string, unknown>;
}

/** Beyond this many upstream steps one listing of the run's steps is cheaper than reading them one by one. */
const UPSTREAM_READ_LIMIT = 100;

// A plan's graph is built once per plan object (revisions are immutable and the store hands out the same object).
const graphs = new WeakMap<Pick<Plan, 'steps'>, PlanGraph>();
export function graphOf(plan: Pick<Plan, 'steps'>): PlanGraph {
  let graph = graphs.get(plan);
  if (!graph) {
    graph = buildGraph(plan.steps);
    graphs.set(plan, graph);
  }
  return graph;
}

/** The executable steps a step transitively waits for: whose outputs `$outputs` binds. */
export function upstreamStepIds(graph: PlanGraph, stepId: string): string[] {
  return [...upstreamClosure(graph, stepId)].filter((id) => graph.has(id) && !graph.isGroup(id));
}

/** The step records `$outputs` (when `withOutputs`) and the direct upstream outputs of a step are made of. */
export function contextStepIds(
  graph: PlanGraph,
  stepId: string,
  upstream: readonly string[],
  withOutputs: boolean,
): string[] {
  return [...new Set([...(withOutputs ? upstreamStepIds(graph, stepId) : []), ...upstream])];
}

/**
 * `$outputs` and the direct upstream outputs of a step, reading only the step records they need and of those only
 * the ones not in `known` (records read along with the step). `withOutputs` false: only the direct ones, for a step
 * whose input binds nothing.
 */
export async function loadStepContext(
  store: Pick<Store, 'getSteps' | 'listSteps'>,
  graph: PlanGraph,
  step: StepRecord,
  withOutputs = true,
  known: readonly StepRecord[] = [],
): Promise<StepContext> {
  const closure = withOutputs ? upstreamStepIds(graph, step.stepId) : [];
  const byId = new Map(known.map((s) => [s.stepId, s]));
  const missing = contextStepIds(graph, step.stepId, step.upstream, withOutputs).filter((id) => !byId.has(id));
  if (missing.length > 0) {
    const records =
      missing.length > UPSTREAM_READ_LIMIT
        ? await store.listSteps(step.runId)
        : await store.getSteps(step.runId, missing);
    for (const record of records) if (!byId.has(record.stepId)) byId.set(record.stepId, record);
  }
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
