/**
 * Shared by the graph tests: terse step builders, a naive oracle that expands group dependencies by brute force
 * (the cross product the real algorithms avoid), and fast-check arbitraries for random plans.
 */
import fc from 'fast-check';
import type { GraphStep } from '../../../shared/plan/graph.ts';
import { STEP_STATUSES, type StepStatus } from '../../../shared/plan/schema.ts';

export const step = (id: string, dependsOn: string[] = [], parentId?: string, seconds?: number): GraphStep => ({
  id,
  dependsOn,
  target: 'tool:run',
  ...(parentId === undefined ? {} : { parentId }),
  ...(seconds === undefined ? {} : { estimatedDurationSeconds: seconds }),
});

export const group = (id: string, dependsOn: string[] = [], parentId?: string): GraphStep => ({
  id,
  dependsOn,
  target: null,
  ...(parentId === undefined ? {} : { parentId }),
});

/** The graph of the research-report example plan: two nested groups, a dependency on a group, a gated group. */
export const groupsExample: readonly GraphStep[] = [
  group('research'),
  step('search', [], 'research'),
  step('fetchA', ['search'], 'research'),
  group('deep', [], 'research'),
  step('fetchB', ['search'], 'deep'),
  step('fetchC', ['search'], 'deep'),
  step('write', ['research']),
  group('publish', ['write']),
  step('review', ['write'], 'publish'),
  step('deploy', ['review'], 'publish'),
];

/** A chain s0 <- s1 <- ... (each step depends on the previous one). */
export const chain = (length: number): GraphStep[] =>
  Array.from({ length }, (_, i) => step(`s${i}`, i === 0 ? [] : [`s${i - 1}`]));

/** Executable step id -> the executable steps it directly waits for. */
export type Edges = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The effective dependencies by definition: upstream(s) = expand(dependsOn of s and of every ancestor group),
 * expand(d) = d when executable, else every executable descendant of d. Assumes unique ids and a valid forest.
 */
export function naiveEdges(steps: readonly GraphStep[]): Edges {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const ancestors = (s: GraphStep): GraphStep[] => {
    const out: GraphStep[] = [];
    for (let p = s.parentId === undefined ? undefined : byId.get(s.parentId); p; ) {
      out.push(p);
      p = p.parentId === undefined ? undefined : byId.get(p.parentId);
    }
    return out;
  };
  const expand = (id: string): string[] => {
    const d = byId.get(id);
    if (d === undefined) return [];
    if (d.target !== null) return [id];
    return steps.filter((s) => s.target !== null && ancestors(s).includes(d)).map((s) => s.id);
  };
  const edges = new Map<string, Set<string>>();
  for (const s of steps) {
    if (s.target === null) continue;
    edges.set(s.id, new Set([s, ...ancestors(s)].flatMap((x) => x.dependsOn.flatMap(expand))));
  }
  return edges;
}

/** What a group's descendants inherit from it: expand(dependsOn of the group and of its ancestors). */
export function naiveGroupUpstream(steps: readonly GraphStep[], id: string): Set<string> {
  const probe = `${id}__probe`;
  const withProbe = [...steps, { ...step(probe), parentId: id }];
  const upstream = new Set(naiveEdges(withProbe).get(probe));
  upstream.delete(probe); // only there when a descendant waits for the group itself: a cycle
  return upstream;
}

export function reachable(edges: Edges, from: string): Set<string> {
  const seen = new Set<string>();
  const stack = [...(edges.get(from) ?? [])];
  for (let v = stack.pop(); v !== undefined; v = stack.pop()) {
    if (seen.has(v)) continue;
    seen.add(v);
    stack.push(...(edges.get(v) ?? []));
  }
  return seen;
}

export const invert = (edges: Edges): Edges => {
  const out = new Map<string, Set<string>>([...edges.keys()].map((k) => [k, new Set<string>()]));
  for (const [from, tos] of edges) for (const to of tos) out.get(to)?.add(from);
  return out;
};

export const isAcyclic = (edges: Edges): boolean => [...edges.keys()].every((v) => !reachable(edges, v).has(v));

/** Every simple path (as a list of nodes) of an acyclic graph, enumerated one by one. */
export function allPaths(edges: Edges): string[][] {
  const paths: string[][] = [];
  const extend = (path: string[]): void => {
    paths.push(path);
    for (const next of edges.get(path[path.length - 1] ?? '') ?? []) extend([...path, next]);
  };
  for (const v of edges.keys()) extend([v]);
  return paths;
}

export const longestPathSteps = (edges: Edges): number => Math.max(0, ...allPaths(edges).map((p) => p.length));

export const longestPathSeconds = (edges: Edges, seconds: (id: string) => number): number =>
  Math.max(0, ...allPaths(edges).map((p) => p.reduce((sum, id) => sum + seconds(id), 0)));

export const naiveReady = (edges: Edges, statuses: ReadonlyMap<string, StepStatus>): string[] =>
  [...edges.keys()].filter((id) => {
    const own = statuses.get(id);
    const done = (d: string) => statuses.get(d) === 'succeeded' || statuses.get(d) === 'skipped';
    return (own === undefined || own === 'pending') && [...(edges.get(id) ?? [])].every(done);
  });

/** A random DAG over nodes 0..n-1 with edges only from a higher to a lower index, under shuffled ids. */
export interface RandomDag {
  readonly ids: readonly string[];
  /** [from, to] index pairs, from > to: ids[from] depends on ids[to]. */
  readonly edges: readonly (readonly [number, number])[];
  readonly seconds: readonly number[];
  readonly statuses: readonly (StepStatus | undefined)[];
}

export const dagArbitrary = (maxNodes: number): fc.Arbitrary<RandomDag> =>
  fc.integer({ min: 1, max: maxNodes }).chain((n) =>
    fc.record({
      ids: fc
        .shuffledSubarray(
          Array.from({ length: n }, (_, i) => `n${i}`),
          { minLength: n, maxLength: n },
        )
        .map((ids) => ids as readonly string[]),
      edges:
        n < 2
          ? fc.constant([])
          : fc.uniqueArray(
              // from in 1..n-1, to in 0..from-1: no filtering, so generation never stalls
              fc.tuple(fc.nat(), fc.nat()).map(([x, y]) => {
                const from = 1 + (x % (n - 1));
                return [from, y % from] as const;
              }),
              { maxLength: n * 2, selector: ([a, b]) => `${a}>${b}` },
            ),
      seconds: fc.array(fc.integer({ min: 0, max: 100 }), { minLength: n, maxLength: n }),
      statuses: fc.array(fc.option(fc.constantFrom(...STEP_STATUSES), { nil: undefined }), {
        minLength: n,
        maxLength: n,
      }),
    }),
  );

/** Steps of a random DAG, listed in plan order = index order of the shuffled ids (so not dependencies first). */
export const dagSteps = (dag: RandomDag): GraphStep[] =>
  dag.ids.map((id, i) =>
    step(
      id,
      dag.edges.filter(([from]) => from === i).map(([, to]) => dag.ids[to] ?? ''),
      undefined,
      dag.seconds[i],
    ),
  );

export const dagEdges = (dag: RandomDag): Edges => naiveEdges(dagSteps(dag));

export const statusMap = (ids: readonly string[], statuses: readonly (StepStatus | undefined)[]) =>
  new Map(ids.flatMap((id, i) => (statuses[i] === undefined ? [] : [[id, statuses[i]] as const])));

/** A random plan with groups: a random forest (a parent always comes earlier) and random dependencies. */
export interface RandomForestPlan {
  readonly steps: readonly GraphStep[];
  readonly statuses: ReadonlyMap<string, StepStatus>;
}

export const forestArbitrary = (maxNodes: number): fc.Arbitrary<RandomForestPlan> =>
  fc.integer({ min: 1, max: maxNodes }).chain((n) =>
    fc
      .record({
        isGroup: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
        parentPick: fc.array(fc.option(fc.nat(), { nil: undefined }), { minLength: n, maxLength: n }),
        deps: fc.array(fc.uniqueArray(fc.nat(n - 1), { maxLength: 2 }), { minLength: n, maxLength: n }),
        seconds: fc.array(fc.integer({ min: 0, max: 50 }), { minLength: n, maxLength: n }),
        statuses: fc.array(fc.option(fc.constantFrom(...STEP_STATUSES), { nil: undefined }), {
          minLength: n,
          maxLength: n,
        }),
        order: fc.shuffledSubarray(
          Array.from({ length: n }, (_, i) => i),
          { minLength: n, maxLength: n },
        ),
      })
      .map(({ isGroup, parentPick, deps, seconds, statuses, order }) => {
        const id = (i: number) => `v${i}`;
        const built = Array.from({ length: n }, (_, i): GraphStep => {
          const earlierGroups = isGroup.flatMap((g, j) => (g && j < i ? [j] : []));
          const pick = parentPick[i];
          const parent =
            pick === undefined || earlierGroups.length === 0 ? undefined : earlierGroups[pick % earlierGroups.length];
          const dependsOn = (deps[i] ?? []).filter((d) => d !== i).map(id);
          const base = isGroup[i] ? group(id(i), dependsOn) : step(id(i), dependsOn, undefined, seconds[i]);
          return parent === undefined ? base : { ...base, parentId: id(parent) };
        });
        return {
          steps: order.map((i) => built[i] as GraphStep),
          statuses: statusMap(
            built.map((s) => s.id),
            statuses,
          ),
        };
      }),
  );
