import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildGraph,
  criticalPath,
  depth,
  downstreamClosure,
  effectiveDownstream,
  effectiveUpstream,
  findCycles,
  type GraphStep,
  readySet,
  topologicalOrder,
  upstreamClosure,
} from '../../../shared/plan/graph.ts';
import {
  forestArbitrary,
  invert,
  isAcyclic,
  longestPathSeconds,
  longestPathSteps,
  naiveEdges,
  naiveGroupUpstream,
  naiveReady,
  reachable,
} from './graph-testkit.ts';

const NUM_RUNS = 400;

const executables = (steps: readonly GraphStep[]) => steps.filter((s) => s.target !== null);
const groups = (steps: readonly GraphStep[]) => steps.filter((s) => s.target === null);

/** Executable steps below a group, by walking parent links upwards from every step. */
const descendantsOf = (steps: readonly GraphStep[], id: string): string[] => {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const below = (s: GraphStep): boolean => {
    for (let p = s.parentId; p !== undefined; p = byId.get(p)?.parentId) if (p === id) return true;
    return false;
  };
  return executables(steps)
    .filter(below)
    .map((s) => s.id);
};

/** Executable steps that depend, themselves or through an ancestor, on the group or on a group around it. */
const naiveGroupDependents = (steps: readonly GraphStep[], id: string): Set<string> => {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const withAncestors = (s: GraphStep | undefined): GraphStep[] =>
    s === undefined ? [] : [s, ...withAncestors(s.parentId === undefined ? undefined : byId.get(s.parentId))];
  const wholes = new Set(withAncestors(byId.get(id)).map((s) => s.id));
  return new Set(
    executables(steps)
      .filter((s) => withAncestors(s).some((x) => x.dependsOn.some((d) => wholes.has(d))))
      .map((s) => s.id),
  );
};

describe('graph algorithms on random plans with groups, against a naive cross-product expansion', () => {
  it('finds a cycle exactly when the expanded graph has one', () => {
    fc.assert(
      fc.property(forestArbitrary(10), ({ steps }) => {
        const graph = buildGraph(steps);
        const acyclic = isAcyclic(naiveEdges(steps));
        expect(findCycles(graph).length === 0).toBe(acyclic);
        expect(topologicalOrder(graph) === null).toBe(!acyclic);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('reports cycles that visit each step once along real relations', () => {
    fc.assert(
      fc.property(forestArbitrary(10), ({ steps }) => {
        const byId = new Map(steps.map((s) => [s.id, s]));
        // a waits for b: b is a dependency of a, a sits in group b, or a is a group holding b
        const related = (a: string, b: string) =>
          byId.get(a)?.dependsOn.includes(b) === true || byId.get(a)?.parentId === b || byId.get(b)?.parentId === a;
        for (const cycle of findCycles(buildGraph(steps))) {
          expect(new Set(cycle).size).toBe(cycle.length);
          cycle.forEach((id, k) => {
            expect(related(id, cycle[(k + 1) % cycle.length] ?? '')).toBe(true);
          });
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('expands direct dependencies and dependents like the definition', () => {
    fc.assert(
      fc.property(forestArbitrary(10), ({ steps }) => {
        const graph = buildGraph(steps);
        const edges = naiveEdges(steps);
        const inverse = invert(edges);
        for (const s of executables(steps)) {
          expect(new Set(effectiveUpstream(graph, s.id))).toEqual(edges.get(s.id));
          expect(new Set(effectiveDownstream(graph, s.id))).toEqual(inverse.get(s.id));
        }
        for (const g of groups(steps)) {
          expect(new Set(effectiveUpstream(graph, g.id))).toEqual(naiveGroupUpstream(steps, g.id));
          expect(new Set(effectiveDownstream(graph, g.id))).toEqual(naiveGroupDependents(steps, g.id));
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('computes the downstream closure as reachability in the expanded graph', () => {
    fc.assert(
      fc.property(forestArbitrary(10), ({ steps }) => {
        const graph = buildGraph(steps);
        const inverse = invert(naiveEdges(steps));
        for (const s of executables(steps)) {
          const expected = reachable(inverse, s.id);
          expected.delete(s.id);
          expect(new Set(downstreamClosure(graph, s.id))).toEqual(expected);
        }
        for (const g of groups(steps)) {
          const expected = new Set(descendantsOf(steps, g.id).flatMap((d) => [...reachable(inverse, d)]));
          expect(new Set(downstreamClosure(graph, g.id))).toEqual(expected);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('contains in the upstream closure every executable step reachable in the expanded graph', () => {
    fc.assert(
      fc.property(forestArbitrary(10), ({ steps }) => {
        const graph = buildGraph(steps);
        const edges = naiveEdges(steps);
        for (const s of executables(steps)) {
          const closure = upstreamClosure(graph, s.id);
          const expected = reachable(edges, s.id);
          expected.delete(s.id);
          expect(new Set([...closure].filter((id) => !graph.isGroup(id)))).toEqual(expected);
          for (const id of closure) {
            if (graph.isGroup(id))
              expect(descendantsOf(steps, id).every((d) => d === s.id || closure.has(d))).toBe(true);
          }
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('computes the ready set as its definition', () => {
    fc.assert(
      fc.property(forestArbitrary(10), ({ steps, statuses }) => {
        const expected = naiveReady(naiveEdges(steps), statuses);
        expect(readySet(buildGraph(steps), statuses)).toEqual(expected);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('computes depth and critical path as the expanded graph when acyclic', () => {
    fc.assert(
      fc.property(forestArbitrary(8), ({ steps }) => {
        const edges = naiveEdges(steps);
        fc.pre(isAcyclic(edges));
        const graph = buildGraph(steps);
        const seconds = (id: string) => steps.find((s) => s.id === id)?.estimatedDurationSeconds ?? 0;
        expect(depth(graph)).toBe(longestPathSteps(edges));
        const path = criticalPath(graph);
        expect(path.seconds).toBe(longestPathSeconds(edges, seconds));
        for (let k = 1; k < path.steps.length; k++) {
          expect(edges.get(path.steps[k] ?? '')?.has(path.steps[k - 1] ?? '')).toBe(true);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('orders steps after their expanded dependencies and groups before their descendants', () => {
    fc.assert(
      fc.property(forestArbitrary(10), ({ steps }) => {
        const edges = naiveEdges(steps);
        fc.pre(isAcyclic(edges));
        const order = topologicalOrder(buildGraph(steps)) ?? [];
        expect([...order].sort()).toEqual(steps.map((s) => s.id).sort());
        const position = (id: string) => order.indexOf(id);
        for (const [id, deps] of edges) for (const d of deps) expect(position(id)).toBeGreaterThan(position(d));
        for (const g of groups(steps)) {
          for (const d of naiveGroupUpstream(steps, g.id)) expect(position(g.id)).toBeGreaterThan(position(d));
          for (const c of steps.filter((s) => s.parentId === g.id))
            expect(position(c.id)).toBeGreaterThan(position(g.id));
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
