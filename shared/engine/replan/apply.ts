/**
 * Turns an accepted replan into revision n+1 and says what happens to each step record: added steps get a record,
 * removed ones are superseded, changed ones start a new generation, kept ones go on as they are. The lists speak of
 * executable steps only (groups have no record) and partition the executable ids of both plans.
 */
import { buildGraph, downstreamClosure, effectiveUpstream, groupStatus, type PlanGraph } from '../../plan/graph.ts';
import type { Plan, PlanStep, StepStatus } from '../../plan/schema.ts';
import type { ReplanScope } from '../../ports/plan-model.ts';
import { replanScope } from './scope.ts';
import { type StepStates, sameDefinition, stateOf, stepsById, withoutLifecycle } from './step-definition.ts';

export interface AppliedReplan {
  /** The new plan revision: finished steps carry their status and result, the rest their current state. */
  readonly revision: Plan;
  /** Executable steps new in this revision (plan order): they get a step record. */
  readonly added: string[];
  /** Executable steps the revision drops (previous plan order): their records become `superseded`. */
  readonly removed: string[];
  /**
   * Executable steps that start a new generation: definition or upstream changed, in scope and not runnable, or
   * downstream of a step that runs again.
   */
  readonly changed: string[];
  /** Executable steps whose record goes on untouched. */
  readonly kept: string[];
}

export interface ApplyReplanOptions {
  /** The scope the replan was made for; default: the scope of every step whose status is `failed`. */
  readonly scope?: ReplanScope;
}

/** Statuses that end a generation without an output: a step in scope with one of these has to run again. */
const RERUN: ReadonlySet<StepStatus> = new Set(['failed', 'blocked', 'cancelled', 'superseded']);

const sameUpstream = (before: PlanGraph, after: PlanGraph, id: string): boolean => {
  const was = effectiveUpstream(before, id);
  const is = new Set(effectiveUpstream(after, id));
  return was.length === is.size && was.every((x) => is.has(x));
};

function failedIds(plan: Plan, states: StepStates): string[] {
  return plan.steps.filter((s) => stateOf(states, s.id)?.status === 'failed').map((s) => s.id);
}

/** Lifecycle fields of a kept step, from its record: a finished step keeps its output as the plan's `result`. */
function keptLifecycle(states: StepStates, id: string): Pick<PlanStep, 'status' | 'result' | 'error'> {
  const state = stateOf(states, id);
  const status = state?.status ?? 'pending';
  const result =
    status === 'succeeded' && state?.output !== undefined
      ? (structuredClone(state.output) as PlanStep['result'])
      : null;
  const error = status === 'succeeded' || status === 'skipped' ? null : (state?.error ?? null);
  return { status, result, error: error === null ? null : structuredClone(error) };
}

export function applyReplan(
  previous: Plan,
  next: Plan,
  states: StepStates,
  options: ApplyReplanOptions = {},
): AppliedReplan {
  const scope = options.scope ?? replanScope(previous, failedIds(previous, states));
  const inScope = new Set(scope.steps);
  const before = buildGraph(previous.steps);
  const after = buildGraph(next.steps);
  const oldSteps = stepsById(previous);
  const newSteps = stepsById(next);
  const wasExecutable = new Set(before.executableIds());
  const isExecutable = new Set(after.executableIds());

  const added: string[] = [];
  const changed: string[] = [];
  const kept: string[] = [];
  for (const id of after.executableIds()) {
    const old = oldSteps.get(id);
    const now = newSteps.get(id);
    if (!wasExecutable.has(id) || old === undefined || now === undefined) {
      added.push(id);
      continue;
    }
    const status = stateOf(states, id)?.status;
    const rerun = inScope.has(id) && status !== undefined && RERUN.has(status);
    if (rerun || !sameDefinition(old, now) || !sameUpstream(before, after, id)) changed.push(id);
    else kept.push(id);
  }
  const removed = before.executableIds().filter((id) => !isExecutable.has(id));
  // A step downstream of one that runs again starts a new generation too, whatever its status, as an invalidation's
  // scope does: a finished one would keep an output made from stale inputs; an open one may have counted the
  // superseded generation's release already (and run from its result), or count it late, unless its next generation
  // names that one stale. Finished ones only get here in a person's replan (it may change finished steps).
  const stale = new Set<string>();
  for (const id of [...changed, ...added]) for (const d of downstreamClosure(after, id)) stale.add(d);
  for (const id of kept.filter((k) => stale.has(k))) {
    kept.splice(kept.indexOf(id), 1);
    changed.push(id);
  }

  const keptSet = new Set(kept);
  const statuses = new Map<string, StepStatus>();
  const lifecycle = new Map<string, Pick<PlanStep, 'status' | 'result' | 'error'>>();
  for (const id of after.executableIds()) {
    const fields = keptSet.has(id)
      ? keptLifecycle(states, id)
      : ({ status: 'pending', result: null, error: null } as const);
    lifecycle.set(id, fields);
    statuses.set(id, fields.status ?? 'pending');
  }
  const seen = new Set<string>();
  const steps = next.steps.map((step): PlanStep => {
    const definition = structuredClone(withoutLifecycle(step));
    const first = !seen.has(step.id);
    seen.add(step.id);
    const own = first ? lifecycle.get(step.id) : undefined;
    if (own) return { ...definition, ...own };
    const status = first && after.isGroup(step.id) ? groupStatus(after, step.id, statuses) : 'pending';
    return { ...definition, status, result: null, error: null };
  });
  return { revision: { ...next, revision: previous.revision + 1, steps }, added, removed, changed, kept };
}
