/**
 * Moves once more (`movesAgain`) on random plans and random states of an invalidation's scope, as concurrent movers
 * and tries that failed part-way leave it: whatever the generations and the stale generations they name, one round
 * of the moves it plans, once landed, leaves no step of the scope waiting for another generation of an upstream step
 * of the scope than the one that step is in (`waitingAmiss` empty), and it moves every step that was.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { invalidationScope, movesAgain, waitingAmiss } from '../../../shared/engine/invalidation.ts';
import { buildGraph, effectiveUpstream, type PlanGraph } from '../../../shared/plan/graph.ts';
import type { StepStatus } from '../../../shared/plan/schema.ts';
import type { StepRecord } from '../../../shared/ports/store.ts';
import { dagArbitrary, dagSteps } from '../plan/graph-testkit.ts';

const NUM_RUNS = 300;

type Fresh = Pick<StepRecord, 'generation' | 'status' | 'staleReleases'>;

const FRESH_STATUSES: readonly StepStatus[] = ['pending', 'ready', 'running', 'succeeded', 'failed', 'blocked'];

/** Per step (by index in the plan): its generation, status, and per upstream step a stale generation or none. */
const stateArbitrary = fc.record({
  generations: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 12, maxLength: 12 }),
  statuses: fc.array(fc.constantFrom(...FRESH_STATUSES), { minLength: 12, maxLength: 12 }),
  stale: fc.array(fc.array(fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }), { maxLength: 24 }), {
    minLength: 12,
    maxLength: 12,
  }),
  roots: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
  lost: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
  moved: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
});

type State = typeof stateArbitrary extends fc.Arbitrary<infer T> ? T : never;

function scopeState(graph: PlanGraph, ids: readonly string[], state: State) {
  const scope = invalidationScope(
    graph,
    state.roots.map((r) => ids[r % ids.length] ?? ''),
  );
  const fresh = new Map<string, Fresh>(
    scope.map((id) => {
      const i = ids.indexOf(id);
      const staleReleases: Record<string, number> = {};
      effectiveUpstream(graph, id).forEach((u, k) => {
        const value = state.stale[i]?.[k];
        if (value !== undefined && value > 0) staleReleases[u] = value;
      });
      const record: Fresh = {
        generation: state.generations[i] ?? 1,
        status: state.statuses[i] ?? 'pending',
        ...(Object.keys(staleReleases).length === 0 ? {} : { staleReleases }),
      };
      return [id, record];
    }),
  );
  const lost = scope.filter((id) => state.lost[ids.indexOf(id)] === true);
  const moved = new Set(scope.filter((id) => state.moved[ids.indexOf(id)] === true && !lost.includes(id)));
  return { scope, fresh, lost, moved };
}

describe('movesAgain on random scopes', () => {
  it('leaves nothing waiting amiss once its moves landed, and moves whatever was', () => {
    fc.assert(
      fc.property(dagArbitrary(12), stateArbitrary, (dag, state) => {
        const graph = buildGraph(dagSteps(dag));
        const { scope, fresh, lost, moved } = scopeState(graph, dag.ids, state);
        const statuses = new Map(scope.map((id) => [id, fresh.get(id)?.status ?? 'pending']));
        const amiss = waitingAmiss(graph, scope, fresh);

        const again = movesAgain(graph, scope, statuses, fresh, lost, moved);
        for (const id of amiss) expect(again.has(id), id).toBe(true);
        const after = new Map(fresh);
        for (const [id, plan] of again) {
          const before = fresh.get(id);
          if (before === undefined) continue;
          after.set(id, {
            generation: before.generation + 1,
            status: plan.status,
            ...(plan.staleReleases === undefined ? {} : { staleReleases: plan.staleReleases }),
          });
        }
        expect(waitingAmiss(graph, scope, after)).toEqual([]);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
