/**
 * Stale-dependency invalidation decisions: which steps an invalidation starts anew (the stale steps and their
 * downstream closure; upstream and unrelated steps keep their results), and whether a resource change makes a step's
 * current generation stale at all. The run's decider (engine/run/rules/invalidate.ts) applies them.
 */
import { downstreamClosure, type PlanGraph } from '../plan/graph.ts';
import type { StepStatus } from '../plan/schema.ts';
import type { StepRecord } from '../ports/store.ts';

/** Statuses of a generation that has run (or is running): only its result can be stale. */
const RAN_STEP_STATUSES: ReadonlySet<StepStatus> = new Set([
  'running',
  'retrying',
  'awaiting_approval',
  'succeeded',
  'failed',
  'skipped',
]);

/**
 * The executable steps an invalidation of `ids` starts anew, in plan order: each id (a group stands for its
 * executable descendants) and everything downstream of it. Unknown ids are ignored.
 */
export function invalidationScope(graph: PlanGraph, ids: readonly string[]): string[] {
  const scope = new Set<string>();
  for (const id of ids) {
    if (!graph.has(id)) continue;
    for (const root of graph.isGroup(id) ? graph.executableDescendants(id) : [id]) scope.add(root);
    for (const downstream of downstreamClosure(graph, id)) scope.add(downstream);
  }
  return graph.executableIds().filter((id) => scope.has(id));
}

/**
 * The latest moment a change reported at `changedAt` can have happened: EventBridge times have whole seconds, so a
 * time without a fraction stands for anything up to the end of its second. Unreadable: +∞ (treated as "now").
 */
function changeBound(changedAt: string): number {
  const time = Date.parse(changedAt);
  if (!Number.isFinite(time)) return Number.POSITIVE_INFINITY;
  return /\.\d+/.test(changedAt) ? time : time + 999;
}

/**
 * Whether a resource change makes the step's current generation stale: only a generation that has run can be, and
 * only if it began before the change (a generation claimed after it read the changed resource already, so an older
 * event delivered late changes nothing). A generation not yet claimed will read the resource when it runs. Without
 * a time, every generation that has run is stale.
 */
export function isStaleAfterChange(
  step: Pick<StepRecord, 'status' | 'startedAt' | 'finishedAt'>,
  changedAt?: string,
): boolean {
  if (!RAN_STEP_STATUSES.has(step.status)) return false;
  const began = step.startedAt ?? step.finishedAt;
  if (changedAt === undefined || began === undefined) return true;
  return Date.parse(began) <= changeBound(changedAt);
}
