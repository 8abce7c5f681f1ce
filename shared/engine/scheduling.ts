/**
 * Plan-shape helpers: the plan's graph, a step's dependents (group dependencies expanded onto executable
 * descendants), the `[plan]` trace text of a step, and the `$outputs` a step binds.
 */
import { buildGraph, effectiveDownstream, type PlanGraph } from '../plan/graph.ts';
import type { Plan, PlanStep } from '../plan/schema.ts';
import type { StepRecord } from '../ports/store.ts';

/** The graph of a plan's steps (a thin wrapper so callers need not know the graph module's input shape). */
export const planGraph = (plan: Pick<Plan, 'steps'>): PlanGraph => buildGraph(plan.steps);

/**
 * The text of a step's `[plan]` trace entry: what it does and on which target, the revision that brought it when it
 * is a later one, and the planner's reasoning for the plan (its `rationale`: the HTN methods chosen and why, or the
 * model's own words), so a person reading one step sees why it is there. Clipped like every trace entry.
 */
export function planTraceText(
  stepId: string,
  step: Pick<PlanStep, 'title' | 'target'> | undefined,
  plan: Pick<Plan, 'rationale' | 'revision'>,
): string {
  const what = `${step?.title ?? stepId} → ${step?.target ?? '?'}`;
  const revision = plan.revision > 1 ? ` (revision ${plan.revision})` : '';
  return plan.rationale ? `${what}${revision}. Why: ${plan.rationale}` : `${what}${revision}`;
}

/** Executable steps that wait for `stepId` directly (group dependencies expanded), in plan order. */
export const dependentsOf = (graph: PlanGraph, stepId: string): string[] => effectiveDownstream(graph, stepId);

/**
 * `$outputs` for a step: the outputs of every executable step it transitively depends on that succeeded (all of
 * them have finished by the time it runs, so the bindings are deterministic); skipped ones, and failures a
 * `continue` policy accepted, are bound to null.
 */
export function upstreamOutputs(
  upstreamIds: Iterable<string>,
  steps: ReadonlyMap<string, Pick<StepRecord, 'status' | 'output'>>,
): Record<string, unknown> {
  const outputs: Record<string, unknown> = {};
  for (const id of upstreamIds) {
    const step = steps.get(id);
    if (step?.status === 'succeeded') outputs[id] = step.output ?? null;
    // A failure accepted by `onFailure: continue` (only such a failure lets a dependent run) reads as null too.
    else if (step?.status === 'skipped' || step?.status === 'failed') outputs[id] = null;
  }
  return outputs;
}
