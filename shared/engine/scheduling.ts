/**
 * Plan-shape helpers the run's decider and its shell schedule with: the plan's graph, a step's dependents (group
 * dependencies expanded onto executable descendants), the `[plan]` trace text, which upstream releases a moved
 * step's next generation no longer counts, and the `$outputs` a step binds.
 */
import { buildGraph, effectiveDownstream, type PlanGraph } from '../plan/graph.ts';
import type { Plan, PlanStep } from '../plan/schema.ts';
import type { StepRecord } from '../ports/store.ts';

export const FIRST_GENERATION = 1;

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

/** Where an upstream step stands as a mover (an invalidation, a revision) gives its dependent a next generation. */
export interface UpstreamGeneration {
  /** It starts its next generation with the dependent's (same invalidation scope, same revision's restarts). */
  readonly moves: boolean;
  /** The generation it moves from, if it moves; else the generation it is in. */
  readonly generation: number;
}

/**
 * The upstream generations whose release counts nothing in a step's next generation (`staleReleases`), one rule for
 * an invalidation's and a revision's new generations. An upstream step that moves with the step is waited for in its
 * next generation: the one it moves from is stale. One that does not move and has not finished well (not in
 * `released`) is waited for in the generation it is in: the one before is stale, since an earlier mover may have
 * moved it and the ended generation's release may still come (its RunStep slowed by the store). A step without a
 * known generation (new in a revision) has no earlier one to name.
 */
export function staleUpstreamReleases(
  upstream: readonly string[],
  released: readonly string[],
  generationOf: (stepId: string) => UpstreamGeneration | undefined,
): Record<string, number> | undefined {
  const stale = upstream.flatMap((id): [string, number][] => {
    const at = generationOf(id);
    if (at === undefined) return [];
    if (at.moves) return [[id, at.generation]];
    return released.includes(id) || at.generation <= FIRST_GENERATION ? [] : [[id, at.generation - 1]];
  });
  return stale.length === 0 ? undefined : Object.fromEntries(stale);
}

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
