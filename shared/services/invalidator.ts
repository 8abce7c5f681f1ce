/**
 * The invalidator: an outside resource changed (a ResourceChanged event, from a signed webhook), so every step that
 * watches it is stale. Each run with watchers of the key is told (an Invalidate command in its mailbox); the run's
 * decider moves what ran before the change and its downstream to a new generation, in one decision, and a change
 * reported late (after a newer one) or twice changes nothing there. A watcher of a revision that no longer watches
 * the key is left out by the decider too (it invalidates the run's current plan's steps only).
 */
import { DEFAULT_TENANT } from '../config/defaults.ts';
import type { RunRecord } from '../ports/store.ts';
import type { CoordinatorDeps } from './coordinator-types.ts';
import { createInterpreter } from './interpreter.ts';
import { withReadsTriedAgain } from './read-again.ts';

/** The invalidator reads what the coordinator reads, and tells the runs' mailboxes. */
export type InvalidatorDeps = CoordinatorDeps;

export interface InvalidateResourceRequest {
  readonly resourceKey: string;
  /** Equal for every delivery of the same change (the webhook's delivery id, else the bus event id). */
  readonly eventId: string;
  /** When the change was reported (the event's time); absent: now. */
  readonly changedAt?: string | undefined;
  /** The webhook source that reported it (`POST /webhooks/{source}`), when one did. */
  readonly source?: string | undefined;
  /** Whose resource changed (absent: the default tenant's): another tenant's runs watching the same key are not told. */
  readonly tenant?: string | undefined;
}

/** Who asked for a resource change's invalidation, as the run records it. */
export const resourceChangeBy = (source: string | undefined): string =>
  source === undefined ? 'event:ResourceChanged' : `webhook:${source}`;

export interface InvalidateResourceResult {
  /** The runs told of the change. */
  readonly runs: readonly string[];
}

export interface Invalidator {
  invalidateResource(request: InvalidateResourceRequest): Promise<InvalidateResourceResult>;
}

/** A run that can take no invalidation is not told: not started, or cancelled before the change was reported. */
function tellable(run: RunRecord | undefined, changedAt: string | undefined): run is RunRecord {
  if (run === undefined || run.status === 'planning') return false;
  if (run.status !== 'cancelled' || run.terminal === undefined || changedAt === undefined)
    return run.status !== 'cancelled';
  return Date.parse(run.terminal.at) >= Date.parse(changedAt);
}

export function createInvalidator(given: InvalidatorDeps): Invalidator {
  const deps = { ...given, store: withReadsTriedAgain(given.store) };
  const ctx = createInterpreter(deps);
  return {
    async invalidateResource(request) {
      const { resourceKey, eventId, changedAt, source } = request;
      const watchers = await deps.store.listWatchers(request.tenant ?? DEFAULT_TENANT, resourceKey);
      const byRun = new Map<string, string[]>();
      for (const w of watchers) byRun.set(w.runId, [...(byRun.get(w.runId) ?? []), w.stepId]);
      const told: string[] = [];
      // One run after the other: a change watched by many runs does not open a socket per run at once.
      for (const [runId, stepIds] of byRun) {
        if (!tellable(await deps.store.getRun(runId), changedAt)) continue;
        const run = await ctx.getRun(runId);
        const { byId } = await ctx.plan(run);
        const roots = stepIds.filter((id) => byId.get(id)?.watches?.includes(resourceKey) === true);
        if (roots.length === 0) continue;
        await deps.mailbox.send(runId, {
          kind: 'Invalidate',
          roots,
          reason: `resource changed: ${resourceKey}`,
          key: `resource#${eventId}`,
          resourceChange: { changedAt },
          by: resourceChangeBy(source),
        });
        told.push(runId);
      }
      return { runs: told };
    },
  };
}
