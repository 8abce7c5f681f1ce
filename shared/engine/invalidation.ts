/**
 * Stale-dependency invalidation decisions: which steps an invalidation starts anew (the stale steps and their
 * downstream closure; upstream and unrelated steps keep their results), how each one's next generation starts
 * (finished upstream steps outside the invalidation count as released), which of them can never run because an
 * upstream step outside it failed, and whether a resource change makes a step's current generation stale at all.
 */
import { downstreamClosure, effectiveUpstream, type PlanGraph } from '../plan/graph.ts';
import type { StepStatus } from '../plan/schema.ts';
import type { NextGeneration, StepRecord } from '../ports/store.ts';
import { FIRST_GENERATION, staleUpstreamReleases } from './scheduling.ts';
import { RELEASING_STEP_STATUSES } from './statuses.ts';

/** Statuses of a generation that has run (or is running): only its result can be stale. */
const RAN_STEP_STATUSES: ReadonlySet<StepStatus> = new Set([
  'running',
  'retrying',
  'awaiting_approval',
  'succeeded',
  'failed',
  'skipped',
]);

/** Upstream statuses that will never release a dependent in their generation. */
const DEAD_END_STATUSES: ReadonlySet<StepStatus> = new Set(['failed', 'blocked', 'cancelled']);

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
 * How each step of the scope starts its next generation: it waits for its whole effective upstream again, except
 * the upstream steps outside the scope that have already finished well (they will not run again, so they count as
 * released now). Nothing left to wait for → `ready`. An upstream step of the scope is waited for in its next
 * generation only: the generation it starts from (`generations`, as the steps were before the move) is named stale,
 * so its release, should it come late (a RunStep that finished just before the invalidation), counts nothing. One
 * outside the scope that has not finished is waited for in the generation it is in: the one before is named stale
 * (an earlier invalidation or revision moved it, and its ended generation's release may still come). The rule is
 * `staleUpstreamReleases`, which a revision's restarted and added steps follow too.
 */
export function nextGenerations(
  graph: PlanGraph,
  scope: readonly string[],
  statuses: ReadonlyMap<string, StepStatus>,
  generations: ReadonlyMap<string, number> = new Map(),
): Map<string, NextGeneration> {
  const inScope = new Set(scope);
  const next = new Map<string, NextGeneration>();
  for (const id of scope) {
    const upstream = effectiveUpstream(graph, id);
    const released = upstream.filter(
      (u) => !inScope.has(u) && RELEASING_STEP_STATUSES.has(statuses.get(u) ?? 'pending'),
    );
    const remaining = upstream.length - released.length;
    const stale = staleUpstreamReleases(upstream, released, (u) => {
      const generation = generations.get(u);
      return generation === undefined ? undefined : { moves: inScope.has(u), generation };
    });
    next.set(id, {
      status: remaining === 0 ? 'ready' : 'pending',
      upstream,
      remaining,
      released,
      ...(stale === undefined ? {} : { staleReleases: stale }),
    });
  }
  return next;
}

/**
 * After this invalidation's moves, which steps of the scope move once more, and how each starts. Two kinds:
 * - a step a concurrent mover (another invalidation, a revision) started first (`lost`) that waits for a step this
 *   invalidation moved (`moved`): it was made from that step as it was before the move, so it either counted its
 *   superseded result or would count a late release of it (it names no stale generation of it);
 * - a step still waiting whose generation waits for another generation of an upstream step of the scope than the one
 *   that step is in now (`waitingAmiss`): a move of the upstream step planned with it that never landed (a try that
 *   failed part-way, its repeat taking both as moved), or moves of it since.
 * - with `closedBy` (this invalidation's key, once the run it reopened had ended under its moves), a step whose
 *   generation it started was closed by that ending (`closedByEnding`).
 * Those steps and what waits for them in the scope move again, from the generation they are in now (`fresh`, which
 * may hold steps outside the scope too); every upstream step of the scope is waited for in the generation it is in
 * after these moves, so a release of any earlier generation of it is stale.
 */
export function movesAgain(
  graph: PlanGraph,
  scope: readonly string[],
  statuses: ReadonlyMap<string, StepStatus>,
  fresh: ReadonlyMap<string, Pick<StepRecord, 'generation' | 'status' | 'staleReleases' | 'generationKey'>>,
  lost: readonly string[],
  moved: ReadonlySet<string>,
  closedBy?: string,
): Map<string, NextGeneration> {
  const counted = new Set(lost.filter((id) => effectiveUpstream(graph, id).some((u) => moved.has(u))));
  for (const id of waitingAmiss(graph, scope, fresh)) counted.add(id);
  for (const id of closedByEnding(scope, fresh, closedBy)) counted.add(id);
  if (counted.size === 0) return new Map();
  const inScope = new Set(scope);
  const again = new Set(invalidationScope(graph, [...counted]).filter((id) => inScope.has(id)));
  // As nextGenerations reads them: the generation a step of the scope moves from, the one a step outside it is in.
  const generations = new Map(
    [...fresh].map(([id, { generation }]): [string, number] => [
      id,
      again.has(id) || !inScope.has(id) ? generation : generation - 1,
    ]),
  );
  const next = nextGenerations(graph, scope, statuses, generations);
  const out = new Map<string, NextGeneration>();
  for (const id of again) {
    const plan = next.get(id);
    if (plan !== undefined) out.set(id, plan);
  }
  return out;
}

/**
 * The steps of the scope whose generation an invalidation keyed `key` started, closed `cancelled` before it ran: the
 * run ended while the invalidation moved its steps, by a way that closes what is open (the run failing before it
 * started for good, its deadline), and the invalidation then reopened it. A cancellation closes them too, but a
 * cancelled run is never reopened; in a run the invalidation reopened they would never run, nor what waits for them.
 */
export function closedByEnding(
  scope: readonly string[],
  fresh: ReadonlyMap<string, Pick<StepRecord, 'status' | 'generationKey'>>,
  key: string | undefined,
): string[] {
  if (key === undefined) return [];
  return scope.filter((id) => {
    const record = fresh.get(id);
    return record?.status === 'cancelled' && record.generationKey === key;
  });
}

/** Statuses of a generation that waits for its upstream steps' releases. */
const WAITING_STATUSES: ReadonlySet<StepStatus> = new Set(['pending', 'ready']);

/**
 * The steps of the scope, still waiting, whose generation does not wait for exactly the generation each upstream step
 * of the scope is in (`fresh`): one that names that generation stale (or a later one) is never released by it, and one
 * that names an earlier one stale would count a late release of a generation between them, which was superseded.
 */
export function waitingAmiss(
  graph: PlanGraph,
  scope: readonly string[],
  fresh: ReadonlyMap<string, Pick<StepRecord, 'generation' | 'status' | 'staleReleases'>>,
): string[] {
  const inScope = new Set(scope);
  return scope.filter((id) => {
    const record = fresh.get(id);
    if (record === undefined || !WAITING_STATUSES.has(record.status)) return false;
    return effectiveUpstream(graph, id).some((u) => {
      const upstream = inScope.has(u) ? fresh.get(u) : undefined;
      // No stale generation named: every generation of it counts, as if the one before the first were named.
      return upstream !== undefined && (record.staleReleases?.[u] ?? FIRST_GENERATION - 1) !== upstream.generation - 1;
    });
  });
}

/**
 * Steps of the scope that can never run in their next generation: an upstream step outside the scope failed (or is
 * blocked), or they wait, through the scope, for such a step. Mapped to the outside steps that stop them.
 */
export function unreachableSteps(
  graph: PlanGraph,
  scope: readonly string[],
  statuses: ReadonlyMap<string, StepStatus>,
): Map<string, string[]> {
  const inScope = new Set(scope);
  const stoppedBy = new Map<string, string[]>();
  // Plan order is not topological in general: repeat until nothing changes (the scope is small and finite).
  for (let changed = true; changed; ) {
    changed = false;
    for (const id of scope) {
      const causes = new Set(stoppedBy.get(id) ?? []);
      const before = causes.size;
      for (const u of effectiveUpstream(graph, id)) {
        if (!inScope.has(u) && DEAD_END_STATUSES.has(statuses.get(u) ?? 'pending')) causes.add(u);
        for (const cause of stoppedBy.get(u) ?? []) causes.add(cause);
      }
      if (causes.size > before) {
        stoppedBy.set(id, [...causes].sort());
        changed = true;
      }
    }
  }
  return stoppedBy;
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

/**
 * The steps whose current generation the invalidation `key` started itself. A repeat of that invalidation (a
 * redelivery, a client's retry, after a first try that failed part-way) takes them as already moved: it neither
 * starts them a generation again nor, since a new generation has not run, finds them fresh and leaves them out
 * (which would skip the rest of the scope).
 */
export function startedByKey(records: Iterable<StepRecord>, key: string | undefined): Set<string> {
  const own = new Set<string>();
  if (key === undefined) return own;
  for (const record of records) if (record.generationKey === key) own.add(record.stepId);
  return own;
}

/**
 * The step as it was before the generation it is in began, from the ended generation's history entry: what a
 * repeat needs of it (its status and, if it was in flight, the execution to stop).
 */
export function generationBefore(step: StepRecord): StepRecord {
  const { claimedBy: _current, ...rest } = step;
  const ended = step.history?.at(-1);
  return {
    ...rest,
    generation: ended?.generation ?? step.generation - 1,
    status: ended?.status ?? 'succeeded',
    ...(ended?.claimedBy === undefined ? {} : { claimedBy: ended.claimedBy }),
  };
}
