import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildGraph, findCycles, type GraphStep, upstreamClosure } from '../../../shared/plan/graph.ts';
import { UpstreamIndex } from '../../../shared/plan/rules/upstream.ts';

/** Random steps with groups: parents come earlier (a forest), dependencies are any other steps (cycles possible). */
const randomSteps = fc.integer({ min: 1, max: 14 }).chain((n) =>
  fc
    .tuple(
      fc.array(fc.boolean(), { minLength: n, maxLength: n }),
      fc.array(fc.option(fc.nat(), { nil: undefined }), { minLength: n, maxLength: n }),
      fc.array(fc.uniqueArray(fc.nat(n - 1), { maxLength: 3 }), { minLength: n, maxLength: n }),
    )
    .map(([isGroup, parents, deps]): GraphStep[] =>
      Array.from({ length: n }, (_, i) => {
        const groupsBefore = isGroup.slice(0, i).flatMap((g, k) => (g ? [k] : []));
        const pick = parents[i];
        const parent =
          pick === undefined || groupsBefore.length === 0 ? undefined : groupsBefore[pick % groupsBefore.length];
        return {
          id: `s${i}`,
          target: isGroup[i] ? null : 'tool:x',
          dependsOn: (deps[i] ?? []).filter((d) => d !== i).map((d) => `s${d}`),
          ...(parent === undefined ? {} : { parentId: `s${parent}` }),
        };
      }),
    ),
);

describe('UpstreamIndex', () => {
  it('answers exactly as upstreamClosure on acyclic plans with groups', () => {
    fc.assert(
      fc.property(randomSteps, fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), (steps, picks) => {
        const graph = buildGraph(steps);
        fc.pre(findCycles(graph).length === 0);
        const targets = picks.map((p) => steps[p % steps.length]?.id ?? '');
        const byId = new Map(steps.map((s) => [s.id, s]));
        const index = new UpstreamIndex(graph, targets, (id) => byId.get(id)?.dependsOn ?? []);
        for (const s of steps) {
          const closure = upstreamClosure(graph, s.id);
          for (const t of targets) expect(index.has(s.id, t), `${t} upstream of ${s.id}`).toBe(closure.has(t));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('falls back to upstreamClosure when the graph is cyclic', () => {
    const steps: GraphStep[] = [
      { id: 'a', target: 'tool:x', dependsOn: ['b'] },
      { id: 'b', target: 'tool:x', dependsOn: ['a'] },
      { id: 'c', target: 'tool:x', dependsOn: [] },
    ];
    const byId = new Map(steps.map((s) => [s.id, s]));
    const index = new UpstreamIndex(buildGraph(steps), ['a', 'c'], (id) => byId.get(id)?.dependsOn ?? []);
    expect(index.has('b', 'a')).toBe(true);
    expect(index.has('b', 'c')).toBe(false);
    expect(index.has('ghost', 'a')).toBe(false);
  });

  it('handles long chains and many targets', () => {
    const steps: GraphStep[] = Array.from({ length: 3000 }, (_, i) => ({
      id: `s${i}`,
      target: 'tool:x',
      dependsOn: i === 0 ? [] : [`s${i - 1}`],
    }));
    const byId = new Map(steps.map((s) => [s.id, s]));
    const targets = steps.filter((_, i) => i % 3 === 0).map((s) => s.id);
    const index = new UpstreamIndex(buildGraph(steps), targets, (id) => byId.get(id)?.dependsOn ?? []);
    expect(index.has('s2999', 's0')).toBe(true);
    expect(index.has('s1500', 's1500')).toBe(false);
    expect(index.has('s1500', 's1503')).toBe(false);
    expect(index.has('s1501', 's1500')).toBe(true);
  });
});
