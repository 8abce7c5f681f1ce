/**
 * What a step is called with: its input with every `"{% … %}"` expression evaluated over `$objective` and
 * `$outputs` (the outputs of every step upstream of it, transitively), and, for an agent's brief, the outputs of
 * the steps it directly waits for.
 */
import { upstreamOutputs } from '../engine/scheduling.ts';
import { ExpressionLimitError } from '../errors.ts';
import type { EvaluationOutcome } from '../plan/expression-limits.ts';
import { collectExpressions, type ExpressionBindings } from '../plan/expressions.ts';
import { child } from '../plan/issues.ts';
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
 * `$outputs` (the outputs of `bound`: the upstream steps the step's expressions read, from its brief; none for a
 * step whose evaluation binds nothing) and the direct upstream outputs of a step, reading only the step records not
 * in `known` (records read along with the step).
 */
export async function loadStepContext(
  store: Pick<Store, 'getSteps' | 'listSteps'>,
  step: StepRecord,
  bound: readonly string[],
  known: readonly StepRecord[] = [],
): Promise<StepContext> {
  const byId = new Map(known.map((s) => [s.stepId, s]));
  const missing = [...new Set([...bound, ...step.upstream])].filter((id) => !byId.has(id));
  if (missing.length > 0) {
    const records =
      missing.length > UPSTREAM_READ_LIMIT
        ? await store.listSteps(step.runId)
        : await store.getSteps(step.runId, missing);
    for (const record of records) if (!byId.has(record.stepId)) byId.set(record.stepId, record);
  }
  return { outputs: upstreamOutputs(bound, byId), direct: upstreamOutputs(step.upstream, byId) };
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
