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
} from '../../../shared/plan/graph.ts';
import {
  dagArbitrary,
  dagEdges,
  dagSteps,
  type Edges,
  invert,
  longestPathSeconds,
  longestPathSteps,
  naiveReady,
  type RandomDag,
  reachable,
  statusMap,
  step,
} from './graph-testkit.ts';

const NUM_RUNS = 300;

/** Every consecutive pair of the cycle (last back to first) is a dependency edge. */
const isRealCycle = (cycle: readonly string[], edges: Edges): boolean =>
  cycle.length > 0 && cycle.every((id, k) => edges.get(id)?.has(cycle[(k + 1) % cycle.length] ?? '') === true);

/** A DAG plus one edge from a node to one of the nodes that transitively depend on it. */
const withBackEdge = (dag: RandomDag, pick: number) => {
  const edges = dagEdges(dag);
  const candidates = [...edges.keys()].flatMap((from) => [...reachable(edges, from)].map((to) => [to, from] as const));
  const chosen = candidates[pick % Math.max(1, candidates.length)];
  if (chosen === undefined) return undefined;
  const [from, to] = chosen; // `to` already depends on `from` transitively; now `from` depends on `to` too
  const steps = dagSteps(dag).map((s) => (s.id === from ? { ...s, dependsOn: [...s.dependsOn, to] } : s));
  const cyclic = new Map([...edges].map(([k, v]) => [k, new Set(v)]));
  cyclic.get(from)?.add(to);
  return { steps, edges: cyclic as Edges, from, to };
};

describe('graph algorithms on random DAGs', () => {
  it('orders every step after each of its dependencies', () => {
    fc.assert(
      fc.property(dagArbitrary(30), (dag) => {
        const order = topologicalOrder(buildGraph(dagSteps(dag)));
        expect(order).not.toBeNull();
        expect([...(order ?? [])].sort()).toEqual([...dag.ids].sort());
        const position = new Map((order ?? []).map((id, k) => [id, k]));
        for (const [from, to] of dag.edges) {
          expect(position.get(dag.ids[from] ?? '')).toBeGreaterThan(position.get(dag.ids[to] ?? '') ?? -1);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('finds no cycle in a DAG', () => {
    fc.assert(
      fc.property(dagArbitrary(30), (dag) => {
        expect(findCycles(buildGraph(dagSteps(dag)))).toEqual([]);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('reports a back edge as exactly one real cycle through it', () => {
    fc.assert(
      fc.property(dagArbitrary(30), fc.nat(), (dag, pick) => {
        const cyclic = withBackEdge(dag, pick);
        fc.pre(cyclic !== undefined);
        if (cyclic === undefined) return;
        const graph = buildGraph(cyclic.steps);
        const cycles = findCycles(graph);
        expect(cycles).toHaveLength(1);
        const [cycle = []] = cycles;
        expect(isRealCycle(cycle, cyclic.edges)).toBe(true);
        expect(cycle).toContain(cyclic.from);
        expect(cycle).toContain(cyclic.to);
        expect(new Set(cycle).size).toBe(cycle.length);
        expect(topologicalOrder(graph)).toBeNull();
        expect(depth(graph)).toBe(Number.POSITIVE_INFINITY);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('reports one cycle in each component that got a back edge', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(dagArbitrary(10), fc.option(fc.nat())), { minLength: 1, maxLength: 4 }),
        (parts) => {
          const steps: GraphStep[] = [];
          const expected: Edges[] = [];
          const allEdges = new Map<string, Set<string>>();
          for (const [k, [dag, pick]] of parts.entries()) {
            const renamed = { ...dag, ids: dag.ids.map((id) => `c${k}.${id}`) };
            const cyclic = pick === null ? undefined : withBackEdge(renamed, pick);
            steps.push(...(cyclic?.steps ?? dagSteps(renamed)));
            for (const [id, deps] of cyclic?.edges ?? dagEdges(renamed)) allEdges.set(id, new Set(deps));
            if (cyclic !== undefined) expected.push(cyclic.edges);
          }
          const cycles = findCycles(buildGraph(steps));
          expect(cycles).toHaveLength(expected.length);
          for (const cycle of cycles) expect(isRealCycle(cycle, allEdges)).toBe(true);
          const componentsHit = new Set(cycles.map((cycle) => cycle[0]?.split('.')[0]));
          expect(componentsHit.size).toBe(expected.length);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('computes depth as the longest path found by enumerating every path', () => {
    fc.assert(
      fc.property(dagArbitrary(8), (dag) => {
        expect(depth(buildGraph(dagSteps(dag)))).toBe(longestPathSteps(dagEdges(dag)));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('computes the critical path as the slowest path found by enumerating every path', () => {
    fc.assert(
      fc.property(dagArbitrary(8), (dag) => {
        const edges = dagEdges(dag);
        const secondsOf = (id: string) => dag.seconds[dag.ids.indexOf(id)] ?? 0;
        const result = criticalPath(buildGraph(dagSteps(dag)));
        expect(result.seconds).toBe(longestPathSeconds(edges, secondsOf));
        expect(result.steps.reduce((sum, id) => sum + secondsOf(id), 0)).toBe(result.seconds);
        for (let k = 1; k < result.steps.length; k++) {
          expect(edges.get(result.steps[k] ?? '')?.has(result.steps[k - 1] ?? '')).toBe(true);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('uses durationOf instead of the estimates when given', () => {
    fc.assert(
      fc.property(dagArbitrary(8), (dag) => {
        const result = criticalPath(buildGraph(dagSteps(dag)), () => 1);
        expect(result.seconds).toBe(longestPathSteps(dagEdges(dag)));
      }),
      { numRuns: 100 },
    );
  });

  it('computes the ready set as its definition', () => {
    fc.assert(
      fc.property(dagArbitrary(20), (dag) => {
        const statuses = statusMap(dag.ids, dag.statuses);
        const expected = naiveReady(dagEdges(dag), statuses);
        expect(readySet(buildGraph(dagSteps(dag)), statuses)).toEqual(expected);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('computes the downstream closure as reachability, in topological order', () => {
    fc.assert(
      fc.property(dagArbitrary(20), fc.nat(), (dag, pick) => {
        const graph = buildGraph(dagSteps(dag));
        const id = dag.ids[pick % dag.ids.length] ?? '';
        const closure = downstreamClosure(graph, id);
        expect(new Set(closure)).toEqual(reachable(invert(dagEdges(dag)), id));
        expect(closure).toHaveLength(new Set(closure).size);
        const order = topologicalOrder(graph) ?? [];
        expect(closure).toEqual(order.filter((x) => closure.includes(x)));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('returns the direct dependencies and dependents without groups', () => {
    fc.assert(
      fc.property(dagArbitrary(20), fc.nat(), (dag, pick) => {
        const graph = buildGraph(dagSteps(dag));
        const id = dag.ids[pick % dag.ids.length] ?? '';
        const edges = dagEdges(dag);
        expect(new Set(effectiveUpstream(graph, id))).toEqual(edges.get(id));
        expect(new Set(effectiveDownstream(graph, id))).toEqual(invert(edges).get(id));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('keeps plan order when the plan already lists dependencies first', () => {
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(fc.nat(), { maxLength: 3 }), { maxLength: 30 }), (picks) => {
        const steps = picks.map((deps, i) => step(`s${i}`, i === 0 ? [] : deps.map((d) => `s${d % i}`)));
        expect(topologicalOrder(buildGraph(steps))).toEqual(steps.map((s) => s.id));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
