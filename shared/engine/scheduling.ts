/**
 * Scheduling decisions without a wave barrier: every executable step gets a record counting its effective upstream
 * steps; each finished upstream step counts once against each dependent, and the count reaching zero starts it.
 * Groups have no record: their dependencies are expanded onto their executable descendants by the plan graph.
 */
import {
  buildGraph,
  downstreamClosure,
  effectiveDownstream,
  effectiveUpstream,
  type PlanGraph,
} from '../plan/graph.ts';
import type { Plan, PlanStep, StepStatus } from '../plan/schema.ts';
import type { StepRecord, TraceEntry } from '../ports/store.ts';
import { RELEASING_STEP_STATUSES } from './statuses.ts';
import { traceEntry } from './trace.ts';

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

/**
 * One record per executable step, `remaining` = how many effective upstream steps it waits for. A step that waits
 * for nothing is born `ready` (the run's start starts it right away): no write is spent moving it there.
 */
export function initialStepRecords(
  plan: RecordPlan,
  options: { runId: string; now: string; generation?: number },
): StepRecord[] {
  const graph = planGraph(plan);
  return recordsOf({ plan, graph, byId: new Map(plan.steps.map((s) => [s.id, s])) }, graph.executableIds(), options);
}

type RecordPlan = Pick<Plan, 'steps'> & Partial<Pick<Plan, 'rationale' | 'revision'>>;

/** A plan with its graph and steps by id, built once (a loaded plan revision). */
interface IndexedPlan {
  readonly plan: RecordPlan;
  readonly graph: PlanGraph;
  readonly byId: ReadonlyMap<string, Pick<PlanStep, 'title' | 'target'>>;
}

function recordsOf(
  indexed: IndexedPlan,
  stepIds: readonly string[],
  options: { runId: string; now: string; generation?: number },
): StepRecord[] {
  const { plan, graph, byId } = indexed;
  const header = { revision: plan.revision ?? 1, ...(plan.rationale ? { rationale: plan.rationale } : {}) };
  return stepIds.map((stepId) => {
    const upstream = effectiveUpstream(graph, stepId);
    const trace: TraceEntry[] = [traceEntry('plan', planTraceText(stepId, byId.get(stepId), header), options.now)];
    return {
      runId: options.runId,
      stepId,
      status: upstream.length === 0 ? 'ready' : 'pending',
      generation: options.generation ?? FIRST_GENERATION,
      upstream,
      remaining: upstream.length,
      released: [],
      attempts: 0,
      trace,
      updatedAt: options.now,
    };
  });
}

/**
 * The initial records (as `initialStepRecords` makes them) of the executable steps of the plan that are neither in
 * `present` nor left out by `wanted`, in plan order (in `wanted`'s order when given). StartRun writes the records of
 * the steps that wait for something behind the run's first steps, so until it is done one of them may be missing:
 * whoever needs it first writes it, by the same conditional put, and whichever put lands first is the record.
 */
export function missingStepRecords(
  indexed: IndexedPlan,
  present: ReadonlySet<string>,
  options: { runId: string; now: string; wanted?: Iterable<string> },
): StepRecord[] {
  const { graph } = indexed;
  const candidates =
    options.wanted === undefined
      ? graph.executableIds()
      : [...new Set(options.wanted)].filter((id) => graph.has(id) && !graph.isGroup(id));
  const missing = candidates.filter((id) => !present.has(id));
  return missing.length === 0 ? [] : recordsOf(indexed, missing, options);
}

/**
 * `records` ordered by how far they are from the run's first steps (a step after all of its upstream steps; ties in
 * the order given), so that StartRun writes first the records the first releases need.
 */
export function inStartOrder(records: readonly StepRecord[]): StepRecord[] {
  const upstreamOf = new Map(records.map((r) => [r.stepId, r.upstream]));
  const depths = new Map<string, number>();
  // A validated plan has no cycle; a step met again while its depth is being worked out counts as a first one.
  const depth = (id: string): number => {
    const known = depths.get(id);
    if (known !== undefined) return known;
    depths.set(id, 0);
    const upstream = (upstreamOf.get(id) ?? []).filter((u) => upstreamOf.has(u));
    const value = upstream.length === 0 ? 0 : 1 + Math.max(...upstream.map(depth));
    depths.set(id, value);
    return value;
  };
  return records
    .map((record, index) => ({ record, index, depth: depth(record.stepId) }))
    .sort((a, b) => a.depth - b.depth || a.index - b.index)
    .map((r) => r.record);
}

/**
 * A step's initial record with the edge from `upstreamId` already counted, as `releaseDependency` would count it on
 * the record once written (moved to `ready` when it was the last one): the one write of a release that finds the
 * record not written yet.
 */
export function countedAgainst(record: StepRecord, upstreamId: string): StepRecord {
  if (!record.upstream.includes(upstreamId) || record.released.includes(upstreamId)) return record;
  const remaining = record.remaining - 1;
  return {
    ...record,
    released: [...record.released, upstreamId],
    remaining,
    status: remaining <= 0 && record.status === 'pending' ? 'ready' : record.status,
  };
}

/** A step that may be started now: nothing left to wait for and not yet claimed by any execution. */
export const isStartable = (step: Pick<StepRecord, 'status' | 'remaining'>): boolean =>
  step.remaining <= 0 && (step.status === 'pending' || step.status === 'ready');

/** Step ids to start, in the order given. */
export function stepsToStart(steps: readonly Pick<StepRecord, 'stepId' | 'status' | 'remaining'>[]): string[] {
  return steps.filter(isStartable).map((s) => s.stepId);
}

/** Whether a finished step lets its dependents go on (succeeded or skipped; a failure blocks them instead). */
export const releasesDependents = (status: StepStatus): boolean => RELEASING_STEP_STATUSES.has(status);

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

/** What `stepsToBlock` needs of the failed generation and of the downstream records, to leave out later generations. */
export interface FailedGeneration {
  readonly generation: number;
  readonly records: ReadonlyMap<string, Pick<StepRecord, 'generation' | 'staleReleases'>>;
}

/**
 * The steps a failure of `failedId` blocks: its whole downstream closure, restricted to those that have not been
 * claimed yet (only they are waiting for it; a claimed or finished step is left alone), in topological order.
 * Given the failed generation, a step whose generation names its upstream's generation stale (`staleReleases`: an
 * invalidation moved both, and it waits for the upstream's next generation) does not wait for the failure, nor does
 * what is reached only through such steps: a late follow-up of the old failure must not block them.
 */
export function stepsToBlock(
  graph: PlanGraph,
  failedId: string,
  statuses: ReadonlyMap<string, StepStatus>,
  failed?: FailedGeneration,
): string[] {
  const waiting = failed === undefined ? undefined : stillWaiting(graph, failedId, failed);
  return downstreamClosure(graph, failedId).filter((id) => {
    const status = statuses.get(id);
    return (status === 'pending' || status === 'ready') && (waiting === undefined || waiting.has(id));
  });
}

/** The downstream steps that wait, through edges none of whose dependents names the upstream's generation stale. */
function stillWaiting(graph: PlanGraph, failedId: string, failed: FailedGeneration): Set<string> {
  const reached = new Set<string>();
  const queue: [string, number][] = [[failedId, failed.generation]];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const [upstreamId, generation] = next;
    for (const id of effectiveDownstream(graph, upstreamId)) {
      const record = failed.records.get(id);
      const stale = record?.staleReleases?.[upstreamId];
      if (reached.has(id) || (stale !== undefined && stale >= generation)) continue;
      reached.add(id);
      queue.push([id, record?.generation ?? 1]);
    }
  }
  return reached;
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
