/**
 * The plan graph: steps form a tree (parentId, groups) and a DAG (dependsOn) at the same time. Every algorithm
 * here runs over one linear-size "virtual" graph instead of expanding group dependencies (which would cost the
 * cross product of the groups' sizes):
 *
 * - an executable step s is one node; it points at each of its dependencies and at enter(parent of s);
 * - a group G is two nodes: enter(G) points at each of G's dependencies and at enter(parent of G); exit(G)
 *   points at every child of G (an executable child, or exit(child group));
 * - a dependency on a step resolves to that step's node, on a group to exit(G).
 *
 * Edges point from a dependent to what it waits for. A path between two executable steps whose inner nodes are
 * all virtual is exactly one effective dependency: s waits for expand(dependsOn of s and of each ancestor group).
 *
 * Node numbering (n = number of distinct steps): node i < n is step i itself when executable, exit(i) when step i
 * is a group; node n + i is enter(i) and exists only for groups.
 */

export interface GraphStep {
  readonly id: string;
  readonly dependsOn: readonly string[];
  readonly parentId?: string | undefined;
  readonly target: string | null;
  readonly estimatedDurationSeconds?: number | undefined;
}

export interface PlanGraph {
  /** Every distinct step id, in plan order (the first of duplicate ids wins). */
  readonly ids: readonly string[];
  has(id: string): boolean;
  isGroup(id: string): boolean;
  /** The group this step belongs to in the effective tree: unknown parents, parents that are not groups and one
   * link of each parent cycle are ignored (the validator reports those). */
  parentOf(id: string): string | undefined;
  /** Direct children of a group, in plan order; [] for an executable or unknown step. */
  children(id: string): readonly string[];
  /** Executable steps below a group, at any depth, in tree pre-order; [] for an executable or unknown step. */
  executableDescendants(id: string): readonly string[];
  /** Every executable step, in plan order. */
  executableIds(): readonly string[];
}

/** Index form of a plan graph shared by the algorithms of this folder. Not exported from the package. */
export interface GraphCore {
  readonly n: number;
  readonly ids: readonly string[];
  readonly index: ReadonlyMap<string, number>;
  /** 1 when step i is a group. */
  readonly group: Uint8Array;
  /** Effective tree parent (always a group), or -1. */
  readonly parent: Int32Array;
  /** The parentId as written, when it names a known step (of any kind, itself included), or -1. */
  readonly rawParent: Int32Array;
  readonly childStart: Int32Array;
  readonly childList: Int32Array;
  /** Out-edges (dependent to dependency) over 2n nodes, compressed: node v's targets are
   * outList[outStart[v] .. outStart[v + 1]). */
  readonly outStart: Int32Array;
  readonly outList: Int32Array;
  readonly inStart: Int32Array;
  readonly inList: Int32Array;
  /** 1 when step i lists itself in dependsOn. */
  readonly selfDependent: Uint8Array;
  /** estimatedDurationSeconds, 0 when absent, negative or not finite. */
  readonly duration: Float64Array;
  /** Every step, parents before children (breadth first from the roots of the effective tree). */
  readonly treeOrder: Int32Array;
  /** Lazily computed results shared by several functions. */
  readonly cache: {
    postOrder?: Int32Array | null;
    rank?: Int32Array;
    executableIds?: readonly string[];
  };
}

/** Where step i starts: itself when executable, enter(i) when a group. */
export const startNode = (core: GraphCore, i: number): number => (core.group[i] === 1 ? core.n + i : i);

/** The step a node stands for (enter(G) and exit(G) both stand for G). */
export const stepOfNode = (core: GraphCore, node: number): number => (node >= core.n ? node - core.n : node);

export const isExecutableNode = (core: GraphCore, node: number): boolean => node < core.n && core.group[node] === 0;

export const at = (array: Int32Array | Uint8Array | Float64Array, i: number): number => array[i] ?? 0;

const cores = new WeakMap<PlanGraph, GraphCore>();

/** The index form behind a graph made by buildGraph. */
export function coreOf(graph: PlanGraph): GraphCore {
  const core = cores.get(graph);
  if (core === undefined) throw new TypeError('the plan graph was not made by buildGraph');
  return core;
}

function compress(nodeCount: number, from: readonly number[], to: readonly number[]): [Int32Array, Int32Array] {
  const start = new Int32Array(nodeCount + 1);
  for (const f of from) start[f + 1] = at(start, f + 1) + 1;
  for (let v = 0; v < nodeCount; v++) start[v + 1] = at(start, v + 1) + at(start, v);
  const fill = start.slice(0, nodeCount);
  const list = new Int32Array(from.length);
  for (let k = 0; k < from.length; k++) {
    const f = from[k] ?? 0;
    list[at(fill, f)] = to[k] ?? 0;
    fill[f] = at(fill, f) + 1;
  }
  return [start, list];
}

/** Follows candidate parent links and drops, on each cycle, the link of the cycle's first step in plan order. */
function breakParentCycles(parent: Int32Array): void {
  const state = new Uint8Array(parent.length); // 0 unseen, 1 on the current walk, 2 settled
  const walk: number[] = [];
  for (let i = 0; i < parent.length; i++) {
    let v = i;
    while (v >= 0 && state[v] === 0) {
      state[v] = 1;
      walk.push(v);
      v = at(parent, v);
    }
    if (v >= 0 && state[v] === 1) {
      let first = v;
      for (let u = at(parent, v); u !== v; u = at(parent, u)) if (u < first) first = u;
      parent[first] = -1;
    }
    for (const u of walk) state[u] = 2;
    walk.length = 0;
  }
}

function makeGraph(core: GraphCore): PlanGraph {
  const { ids, index, group, parent, childStart, childList } = core;
  const childrenOf = (i: number): number[] => {
    const out: number[] = [];
    for (let k = at(childStart, i); k < at(childStart, i + 1); k++) out.push(at(childList, k));
    return out;
  };
  const graph: PlanGraph = {
    ids,
    has: (id) => index.has(id),
    isGroup: (id) => {
      const i = index.get(id);
      return i !== undefined && group[i] === 1;
    },
    parentOf: (id) => {
      const i = index.get(id);
      const p = i === undefined ? -1 : at(parent, i);
      return p < 0 ? undefined : ids[p];
    },
    children: (id) => {
      const i = index.get(id);
      return i === undefined ? [] : childrenOf(i).map((c) => ids[c] ?? '');
    },
    executableDescendants: (id) => {
      const i = index.get(id);
      if (i === undefined || group[i] === 0) return [];
      const out: string[] = [];
      const stack = childrenOf(i).reverse();
      for (let v = stack.pop(); v !== undefined; v = stack.pop()) {
        if (group[v] === 0) out.push(ids[v] ?? '');
        else for (let k = at(childStart, v + 1) - 1; k >= at(childStart, v); k--) stack.push(at(childList, k));
      }
      return out;
    },
    executableIds: () => {
      core.cache.executableIds ??= ids.filter((_, i) => group[i] === 0);
      return core.cache.executableIds;
    },
  };
  cores.set(graph, core);
  return graph;
}

/**
 * Builds the graph of a plan's steps. Tolerant by design, because the validator reports each of these problems
 * itself: a duplicate id keeps its first step, unknown dependency and parent ids are ignored, a parent that is not
 * a group is ignored, and on a parent cycle the link of the cycle's first step in plan order is dropped. Never
 * throws and runs in time linear in steps + dependency edges.
 */
export function buildGraph(steps: readonly GraphStep[]): PlanGraph {
  const index = new Map<string, number>();
  const kept: GraphStep[] = [];
  const ids: string[] = [];
  for (const step of steps) {
    const id = step?.id;
    if (typeof id !== 'string' || index.get(id) !== undefined) continue;
    index.set(id, kept.length);
    kept.push(step);
    ids.push(id);
  }
  const n = kept.length;
  const group = new Uint8Array(n);
  const rawParent = new Int32Array(n).fill(-1);
  const parent = new Int32Array(n).fill(-1);
  const duration = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const step = kept[i] as GraphStep;
    group[i] = step.target === null ? 1 : 0;
    const d = step.estimatedDurationSeconds;
    duration[i] = typeof d === 'number' && Number.isFinite(d) && d > 0 ? d : 0;
  }
  const linkChild: number[] = [];
  const linkParent: number[] = [];
  for (let i = 0; i < n; i++) {
    const parentId = (kept[i] as GraphStep).parentId;
    const p = typeof parentId === 'string' ? index.get(parentId) : undefined;
    if (p === undefined) continue;
    rawParent[i] = p;
    if (p !== i && group[p] === 1) parent[i] = p;
  }
  breakParentCycles(parent);
  for (let i = 0; i < n; i++) {
    const p = at(parent, i);
    if (p < 0) continue;
    linkParent.push(p);
    linkChild.push(i);
  }
  const [childStart, childList] = compress(n, linkParent, linkChild);

  const from: number[] = [];
  const to: number[] = [];
  const selfDependent = new Uint8Array(n);
  const seen = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const step = kept[i] as GraphStep;
    const start = group[i] === 1 ? n + i : i;
    const deps = Array.isArray(step.dependsOn) ? step.dependsOn : [];
    for (const dep of deps) {
      const j = typeof dep === 'string' ? index.get(dep) : undefined;
      if (j === undefined || seen[j] === i) continue;
      seen[j] = i;
      if (j === i) selfDependent[i] = 1;
      from.push(start);
      to.push(j); // node j is the step itself, or exit(j) for a group
    }
    const p = at(parent, i);
    if (p >= 0) {
      from.push(start, p); // the child waits for enter(p); exit(p) waits for the child
      to.push(n + p, i);
    }
  }
  const [outStart, outList] = compress(2 * n, from, to);
  const [inStart, inList] = compress(2 * n, to, from);

  const treeOrder = new Int32Array(n);
  let size = 0;
  for (let i = 0; i < n; i++) if (at(parent, i) < 0) treeOrder[size++] = i;
  for (let head = 0; head < size; head++) {
    const v = at(treeOrder, head);
    for (let k = at(childStart, v); k < at(childStart, v + 1); k++) treeOrder[size++] = at(childList, k);
  }

  return makeGraph({
    n,
    ids,
    index,
    group,
    parent,
    rawParent,
    childStart,
    childList,
    outStart,
    outList,
    inStart,
    inList,
    selfDependent,
    duration,
    treeOrder,
    cache: {},
  });
}
