/**
 * Persisting a plan revision: the immutable revision itself (conditional put: two writers of the same revision →
 * one wins, the other gets a ConflictError) and the watchers of its steps (`watches`), which a ResourceChanged event
 * looks up. Revision 1 is persisted by the coordinator's startRun, revision n+1 by the replanner.
 */
import type { Plan } from '../plan/schema.ts';
import type { Store, WatchEntry } from '../ports/store.ts';

/** What persisting a revision needs: the coordinator's context and the replanner's both carry it. */
export interface RevisionContext {
  readonly deps: { readonly store: Store };
}

/** One entry per (step, resource key) the plan's steps watch, in plan order. */
export function watchEntries(plan: Pick<Plan, 'steps'>): WatchEntry[] {
  return plan.steps.flatMap((step) => (step.watches ?? []).map((resourceKey) => ({ stepId: step.id, resourceKey })));
}

/**
 * Writes the watchers first, then the revision: a watcher entry is idempotent and harmless without its revision
 * (the invalidator checks the run's current plan), so a crash in between is repaired by the repeat, which writes
 * the same entries again before it finds (ConflictError) or writes the revision.
 */
export async function persistRevision(ctx: RevisionContext, runId: string, plan: Plan, reason: string): Promise<void> {
  const { store } = ctx.deps;
  const watches = watchEntries(plan);
  if (watches.length > 0) await store.putWatches(runId, watches);
  await store.putPlanRevision(runId, plan, reason);
}
