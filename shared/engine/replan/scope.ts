/**
 * The replan scope rule: a replan may change only the failed steps and what is downstream of them; everything else
 * is frozen and must come back exactly as it was, and no finished step may be touched or dropped. "Exactly as it
 * was" includes what a frozen step waits for: a new step put into a group that a frozen step depends on would
 * change that step as surely as editing its dependsOn, so effective upstream sets are compared too.
 *
 * A person's replan (requestScope) opens the whole plan: any step may change, finished ones included (a changed
 * finished step runs again), but no finished step may be dropped, and the objective may be the person's new one.
 */

import { buildGraph, downstreamClosure, effectiveUpstream, type PlanGraph } from '../../plan/graph.ts';
import { pointer } from '../../plan/issues.ts';
import type { Plan } from '../../plan/schema.ts';
import type { ReplanScope } from '../../ports/plan-model.ts';
import { changedFields, isFinishedStatus, type StepStates, statusOf } from './step-definition.ts';

export type { ReplanScope } from '../../ports/plan-model.ts';

export const REPLAN_ISSUE_CODES = [
  /** A frozen (or finished) step changed: its definition or the steps it effectively waits for. */
  'E_REPLAN_SCOPE',
  /** A finished (succeeded or skipped) step is missing from the new plan. */
  'E_REPLAN_REMOVED_FINISHED',
  /** A frozen step that has not finished is missing from the new plan. */
  'E_REPLAN_REMOVED_FROZEN',
  /** The new plan is for another objective. */
  'E_REPLAN_OBJECTIVE',
] as const;
export type ReplanIssueCode = (typeof REPLAN_ISSUE_CODES)[number];

export interface ReplanIssue {
  readonly code: ReplanIssueCode;
  /** The step the issue is about ('' for the plan). */
  readonly stepId: string;
  /** JSON Pointer into the new plan ('' when the step is missing from it). */
  readonly path: string;
  readonly message: string;
}

/**
 * The steps a replan may change: the failed steps (an unknown id is ignored; a group stands for its executable
 * descendants), their downstream closures, and every group all of whose executable descendants are in scope (so a
 * method may restructure a subtree it owns entirely). Plan order.
 */
export function replanScope(plan: Pick<Plan, 'steps'>, failedStepIds: Iterable<string>): ReplanScope {
  const graph = buildGraph(plan.steps);
  const requested = new Set(failedStepIds);
  const executable = new Set<string>();
  const failed: string[] = [];
  for (const id of graph.ids) {
    if (!requested.has(id)) continue;
    const sources = graph.isGroup(id) ? graph.executableDescendants(id) : [id];
    if (!graph.isGroup(id)) failed.push(id);
    for (const source of sources) {
      executable.add(source);
      for (const d of downstreamClosure(graph, source)) executable.add(d);
    }
  }
  const steps = graph.ids.filter((id) => {
    if (!graph.isGroup(id)) return executable.has(id);
    const descendants = graph.executableDescendants(id);
    return descendants.length > 0 && descendants.every((d) => executable.has(d));
  });
  return { failed, steps };
}

/**
 * The scope of a person's replan: every step, finished ones included (`finishedMayChange`), and the new objective
 * when one was asked for. `failed` names the failed executable steps, for the planner's diagnosis.
 */
export function requestScope(
  plan: Pick<Plan, 'steps'>,
  failedStepIds: Iterable<string> = [],
  objective?: string,
): ReplanScope {
  const graph = buildGraph(plan.steps);
  const requested = new Set(failedStepIds);
  return {
    failed: graph.executableIds().filter((id) => requested.has(id)),
    steps: [...graph.ids],
    finishedMayChange: true,
    ...(objective === undefined ? {} : { objective }),
  };
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((x) => set.has(x));
};

/**
 * The steps a replan must leave alone: every step out of scope, and every finished executable step (unless a
 * person's replan lets finished steps change: `finishedMayChange`).
 */
export function frozenSteps(plan: Pick<Plan, 'steps'>, scope: ReplanScope, states: StepStates = new Map()): string[] {
  const graph = buildGraph(plan.steps);
  const inScope = new Set(scope.steps);
  const finishedFrozen = scope.finishedMayChange !== true;
  return graph.ids.filter(
    (id) => !inScope.has(id) || (finishedFrozen && !graph.isGroup(id) && isFinishedStatus(statusOf(states, id))),
  );
}

/** Finished executable steps a replan may change but never drop (a person's replan: finished work stays in the plan). */
function keptFinished(plan: Pick<Plan, 'steps'>, scope: ReplanScope, states: StepStates): string[] {
  if (scope.finishedMayChange !== true) return [];
  const graph = buildGraph(plan.steps);
  const inScope = new Set(scope.steps);
  return graph.executableIds().filter((id) => inScope.has(id) && isFinishedStatus(statusOf(states, id)));
}

function upstreamChange(before: PlanGraph, after: PlanGraph, id: string): string | undefined {
  if (before.isGroup(id) !== after.isGroup(id)) return 'it turned into a group or out of one';
  if (before.isGroup(id)) return undefined; // a group's effect shows on its executable descendants
  const was = effectiveUpstream(before, id);
  const is = effectiveUpstream(after, id);
  if (sameSet(was, is)) return undefined;
  const added = is.filter((x) => !was.includes(x));
  const dropped = was.filter((x) => !is.includes(x));
  const parts = [
    added.length > 0 ? `now also waits for ${added.join(', ')}` : '',
    dropped.length > 0 ? `no longer waits for ${dropped.join(', ')}` : '',
  ].filter(Boolean);
  return parts.join('; ');
}

/**
 * Whether `next` is an acceptable revision of `previous` under `scope`: every frozen step present with the same
 * definition (lifecycle fields aside) and the same effective upstream, the objective unchanged. Returns every
 * problem (empty when acceptable), frozen steps in previous-plan order.
 */
export function checkReplan(
  previous: Plan,
  next: Plan,
  scope: ReplanScope,
  states: StepStates = new Map(),
): ReplanIssue[] {
  const issues: ReplanIssue[] = [];
  const objective = scope.objective ?? previous.objective;
  if (next.objective !== objective)
    issues.push({
      code: 'E_REPLAN_OBJECTIVE',
      stepId: '',
      path: '/objective',
      message:
        scope.objective === undefined
          ? 'a replan keeps the objective of the run'
          : 'a replan keeps the objective the person asked for',
    });
  const before = buildGraph(previous.steps);
  const after = buildGraph(next.steps);
  const index = new Map<string, number>();
  next.steps.forEach((step, i) => {
    if (!index.has(step.id)) index.set(step.id, i);
  });
  const previousById = new Map(previous.steps.map((s) => [s.id, s]));
  for (const id of keptFinished(previous, scope, states))
    if (!index.has(id))
      issues.push({
        code: 'E_REPLAN_REMOVED_FINISHED',
        stepId: id,
        path: '',
        message: `step ${id} has finished (${statusOf(states, id)}): a replan keeps it (changed, it runs again)`,
      });
  for (const id of frozenSteps(previous, scope, states)) {
    const finished = !before.isGroup(id) && isFinishedStatus(statusOf(states, id));
    const at = index.get(id);
    if (at === undefined) {
      issues.push({
        code: finished ? 'E_REPLAN_REMOVED_FINISHED' : 'E_REPLAN_REMOVED_FROZEN',
        stepId: id,
        path: '',
        message: finished
          ? `step ${id} has finished (${statusOf(states, id)}): a replan keeps it with its id and output`
          : `step ${id} is outside the replan scope: a replan keeps it`,
      });
      continue;
    }
    const old = previousById.get(id);
    const now = next.steps[at];
    if (old === undefined || now === undefined) continue;
    const fields = changedFields(old, now);
    const why = fields.length > 0 ? `changed ${fields.join(', ')}` : upstreamChange(before, after, id);
    if (why)
      issues.push({
        code: 'E_REPLAN_SCOPE',
        stepId: id,
        path: pointer(['steps', at]),
        message: `step ${id} is ${finished ? 'finished' : 'outside the replan scope'} and must stay as it was: ${why}`,
      });
  }
  return issues;
}
