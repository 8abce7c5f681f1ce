/**
 * What a step is called with: its input with every `"{% … %}"` expression evaluated over `$objective` and
 * `$outputs` (the outputs of every step upstream of it, transitively), and, for an agent's brief, the outputs of
 * the steps it directly waits for.
 */
import { upstreamOutputs } from '../engine/scheduling.ts';
import { ExpressionLimitError } from '../errors.ts';
import { namedOutputSteps } from '../plan/bound-outputs.ts';
import type { EvaluationOutcome } from '../plan/expression-limits.ts';
import { collectExpressions, type ExpressionBindings } from '../plan/expressions.ts';
import { type PlanGraph, upstreamClosure } from '../plan/graph.ts';
import { child } from '../plan/issues.ts';
import type { PlanStep } from '../plan/schema.ts';
import type { ExpressionEvaluator } from '../ports/expressions.ts';
import type { StepRecord, Store } from '../ports/store.ts';

export interface StepContext {
  /** `$outputs`: every upstream step (transitively) that finished; skipped ones are null. */
  readonly outputs: Record<string, unknown>;
  /** The outputs of the steps the step directly waits for (its record's `upstream`), for an agent's brief. */
  readonly direct: Record<string, unknown>;
}

/** Beyond this many upstream steps one listing of the run's steps is cheaper than reading them one by one. */
const UPSTREAM_READ_LIMIT = 100;

/**
 * The executable steps a step transitively waits for whose outputs `$outputs` binds: all of them, or, given the
 * step's definition, only those its expressions can read (../plan/bound-outputs.ts).
 */
export function upstreamStepIds(graph: PlanGraph, stepId: string, definition?: PlanStep): string[] {
  const closure = [...upstreamClosure(graph, stepId)].filter((id) => graph.has(id) && !graph.isGroup(id));
  const named = definition === undefined ? undefined : namedOutputSteps(definition);
  return named === undefined ? closure : closure.filter((id) => named.has(id));
}

/** The step records `$outputs` (when `withOutputs`) and the direct upstream outputs of a step are made of. */
export function contextStepIds(
  graph: PlanGraph,
  stepId: string,
  upstream: readonly string[],
  withOutputs: boolean,
  definition?: PlanStep,
): string[] {
  return [...new Set([...(withOutputs ? upstreamStepIds(graph, stepId, definition) : []), ...upstream])];
}

/**
 * `$outputs` and the direct upstream outputs of a step, reading only the step records they need and of those only
 * the ones not in `known` (records read along with the step). `withOutputs` false: only the direct ones, for a step
 * whose input binds nothing. With the step's `definition`, `$outputs` holds only the outputs its expressions can
 * read.
 */
export async function loadStepContext(
  store: Pick<Store, 'getSteps' | 'listSteps'>,
  graph: PlanGraph,
  step: StepRecord,
  withOutputs = true,
  known: readonly StepRecord[] = [],
  definition?: PlanStep,
): Promise<StepContext> {
  const closure = withOutputs ? upstreamStepIds(graph, step.stepId, definition) : [];
  const byId = new Map(known.map((s) => [s.stepId, s]));
  const missing = contextStepIds(graph, step.stepId, step.upstream, withOutputs, definition).filter(
    (id) => !byId.has(id),
  );
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
 * Evaluates every expression inside a step's input, all in one request to the evaluator (one message to a worker,
 * one time budget). As in Step Functions' JSONata fields, an expression that yields nothing drops its object field
 * (and becomes null inside an array). A step without input is called with `{}`. A bound that is hit throws an
 * ExpressionLimitError, any other failure an Error that says which expression failed.
 */
export async function evaluateStepInput(
  input: unknown,
  bindings: ExpressionBindings,
  evaluator: ExpressionEvaluator,
): Promise<unknown> {
  if (input === undefined) return {};
  const found = collectExpressions(input, '');
  if (found.length === 0) return input;
  const outcomes = await evaluator.evaluate({ sources: found.map((f) => f.source), bindings });
  const values = new Map<string, unknown>();
  found.forEach((f, i) => {
    const outcome = outcomes[i] as EvaluationOutcome;
    if (!outcome.ok) {
      const where = f.path === '' ? '' : ` (at ${f.path})`;
      if (outcome.limit) throw new ExpressionLimitError(`${outcome.message}${where}`);
      throw new Error(`${outcome.message}${where}`);
    }
    values.set(f.path, outcome.value);
  });
  const value = substitute(input, '', values);
  return value === undefined ? {} : value;
}

/** The input with each expression (found by its JSON Pointer) replaced by its value. */
function substitute(value: unknown, path: string, values: ReadonlyMap<string, unknown>): unknown {
  if (typeof value === 'string') return values.has(path) ? values.get(path) : value;
  if (Array.isArray(value))
    return value.map((item, i) => {
      const result = substitute(item, child(path, i), values);
      return result === undefined ? null : result;
    });
  if (typeof value === 'object' && value !== null) {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const evaluated = substitute(item, child(path, key), values);
      if (evaluated !== undefined) result[key] = evaluated;
    }
    return result;
  }
  return value;
}
