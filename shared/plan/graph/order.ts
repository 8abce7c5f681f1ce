import { at, coreOf, type GraphCore, isExecutableNode, type PlanGraph, startNode } from './core.ts';

/**
 * Every node, dependencies first (depth-first post-order with an explicit stack), or null when the graph has a
 * cycle. Roots are taken in plan order (each step's start node, then the groups' exit nodes), so a plan that
 * already lists dependencies first keeps its order. Cached on the graph.
 */
export function postOrder(core: GraphCore): Int32Array | null {
  if (core.cache.postOrder !== undefined) return core.cache.postOrder;
  const { n, group, outStart, outList } = core;
  const total = 2 * n;
  const color = new Uint8Array(total); // 0 unseen, 1 open, 2 done
  const callNode = new Int32Array(total);
  const callEdge = new Int32Array(total);
  const order = new Int32Array(n + n);
  let size = 0;
  const visit = (root: number): boolean => {
    if (color[root] !== 0) return true;
    let top = 0;
    callNode[0] = root;
    callEdge[0] = at(outStart, root);
    color[root] = 1;
    while (top >= 0) {
      const v = at(callNode, top);
      const e = at(callEdge, top);
      if (e < at(outStart, v + 1)) {
        callEdge[top] = e + 1;
        const w = at(outList, e);
        if (color[w] === 1) return false;
        if (color[w] === 0) {
          color[w] = 1;
          top++;
          callNode[top] = w;
          callEdge[top] = at(outStart, w);
        }
        continue;
      }
      color[v] = 2;
      order[size++] = v;
      top--;
    }
    return true;
  };
  let acyclic = true;
  for (let i = 0; i < n && acyclic; i++) acyclic = visit(startNode(core, i));
  for (let i = 0; i < n && acyclic; i++) if (group[i] === 1) acyclic = visit(i);
  core.cache.postOrder = acyclic ? order.subarray(0, size) : null;
  return core.cache.postOrder;
}

/** Position of each step in topologicalOrder, or its plan index when the graph is cyclic. Cached. */
export function stepRank(core: GraphCore): Int32Array {
  if (core.cache.rank !== undefined) return core.cache.rank;
  const { n, group } = core;
  const rank = new Int32Array(n);
  const post = postOrder(core);
  if (post === null) for (let i = 0; i < n; i++) rank[i] = i;
  else {
    let k = 0;
    for (const v of post) if (v >= n || group[v] === 0) rank[v >= n ? v - n : v] = k++;
  }
  core.cache.rank = rank;
  return rank;
}

/**
 * Every step id such that each step comes after everything it effectively depends on, or null when cyclic.
 * Rule for groups: a group appears where it is entered, i.e. after its own and its ancestors' dependencies and
 * before all of its descendants; a step that depends on a group comes after all of the group's descendants.
 * Deterministic and stable: a plan whose steps already come after their dependencies keeps its order.
 */
export function topologicalOrder(graph: PlanGraph): string[] | null {
  const core = coreOf(graph);
  const post = postOrder(core);
  if (post === null) return null;
  const out: string[] = [];
  for (const v of post) {
    if (v >= core.n) out.push(core.ids[v - core.n] ?? '');
    else if (core.group[v] === 0) out.push(core.ids[v] ?? '');
  }
  return out;
}

/**
 * Number of executable steps on the longest effective dependency path (group nodes count 0): an independent step
 * has depth 1, a plan without executable steps 0. Infinity when the graph has a cycle.
 */
export function depth(graph: PlanGraph): number {
  const core = coreOf(graph);
  const post = postOrder(core);
  if (post === null) return Number.POSITIVE_INFINITY;
  const { outStart, outList } = core;
  const longest = new Int32Array(2 * core.n);
  let best = 0;
  for (const v of post) {
    let below = 0;
    for (let e = at(outStart, v); e < at(outStart, v + 1); e++) below = Math.max(below, at(longest, at(outList, e)));
    const here = below + (isExecutableNode(core, v) ? 1 : 0);
    longest[v] = here;
    if (here > best) best = here;
  }
  return best;
}

const sanitize = (seconds: number): number => (Number.isFinite(seconds) && seconds > 0 ? seconds : 0);

/**
 * The longest effective dependency path by duration over executable steps, in execution order. The duration of a
 * step is durationOf(id) (default: estimatedDurationSeconds, absent = 0); negative, NaN or infinite durations
 * count 0. Among paths of equal duration the one with more steps wins. { steps: [], seconds: 0 } when there is
 * no executable step; { steps: [], seconds: Infinity } when the graph has a cycle.
 */
export function criticalPath(
  graph: PlanGraph,
  durationOf?: (id: string) => number,
): { steps: string[]; seconds: number } {
  const core = coreOf(graph);
  const post = postOrder(core);
  if (post === null) return { steps: [], seconds: Number.POSITIVE_INFINITY };
  const { n, ids, outStart, outList, duration } = core;
  const seconds = new Float64Array(2 * n);
  const count = new Int32Array(2 * n);
  const next = new Int32Array(2 * n).fill(-1);
  // Longer by duration, then by number of steps; -1 (no node) is shorter than anything.
  const longer = (a: number, b: number): boolean =>
    b < 0 || at(seconds, a) > at(seconds, b) || (seconds[a] === seconds[b] && at(count, a) > at(count, b));
  let end = -1;
  for (const v of post) {
    let via = -1;
    for (let e = at(outStart, v); e < at(outStart, v + 1); e++) {
      const w = at(outList, e);
      if (longer(w, via)) via = w;
    }
    const executable = isExecutableNode(core, v);
    const own = executable ? sanitize(durationOf === undefined ? at(duration, v) : durationOf(ids[v] ?? '')) : 0;
    seconds[v] = own + (via < 0 ? 0 : at(seconds, via));
    count[v] = (executable ? 1 : 0) + (via < 0 ? 0 : at(count, via));
    next[v] = via;
    if (executable && longer(v, end)) end = v;
  }
  if (end < 0) return { steps: [], seconds: 0 };
  const steps: string[] = [];
  for (let v = end; v >= 0; v = at(next, v)) if (isExecutableNode(core, v)) steps.push(ids[v] ?? '');
  return { steps: steps.reverse(), seconds: at(seconds, end) };
}
