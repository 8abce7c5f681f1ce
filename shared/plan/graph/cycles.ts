import { at, coreOf, type GraphCore, type PlanGraph, stepOfNode } from './core.ts';

/**
 * Turns a cycle of nodes into a cycle of step indices: enter(G) and exit(G) both become G, and whenever a step
 * comes back the loop between its two visits is cut, which keeps every consecutive pair related (dependency,
 * child of, or group containing) and leaves each step once. Rotated to start at the first step in plan order.
 */
function simplify(core: GraphCore, nodes: readonly number[]): number[] {
  const out: number[] = [];
  const position = new Map<number, number>();
  for (const node of nodes) {
    const step = stepOfNode(core, node);
    const p = position.get(step);
    if (p === undefined) {
      position.set(step, out.length);
      out.push(step);
      continue;
    }
    for (let k = out.length - 1; k > p; k--) position.delete(out[k] ?? -1);
    out.length = p + 1;
  }
  let first = 0;
  for (let k = 1; k < out.length; k++) if ((out[k] ?? 0) < (out[first] ?? 0)) first = k;
  return [...out.slice(first), ...out.slice(0, first)];
}

/** A step's edge to itself (enter(G) to exit(G) for a group): reported as [id] and left out of the search, so
 * that the other cycles reported never exist only because of a self-dependency. */
const isSelfEdge = (core: GraphCore, v: number, w: number): boolean =>
  w < core.n && core.selfDependent[w] === 1 && (v === w || v === core.n + w);

/** Strongly connected components by Tarjan's algorithm with an explicit stack; comp[v] is v's component. */
function components(core: GraphCore): { comp: Int32Array; roots: number[]; sizes: number[] } {
  const { n, group, outStart, outList } = core;
  const total = 2 * n;
  const order = new Int32Array(total).fill(-1);
  const low = new Int32Array(total);
  const onStack = new Uint8Array(total);
  const comp = new Int32Array(total).fill(-1);
  const callNode = new Int32Array(total);
  const callEdge = new Int32Array(total);
  const stack: number[] = [];
  const roots: number[] = [];
  const sizes: number[] = [];
  let counter = 0;
  for (let root = 0; root < total; root++) {
    if (order[root] !== -1 || (root >= n && group[root - n] === 0)) continue;
    let top = 0;
    callNode[0] = root;
    callEdge[0] = at(outStart, root);
    order[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (top >= 0) {
      const v = at(callNode, top);
      const e = at(callEdge, top);
      if (e < at(outStart, v + 1)) {
        callEdge[top] = e + 1;
        const w = at(outList, e);
        if (isSelfEdge(core, v, w)) continue;
        if (order[w] === -1) {
          top++;
          callNode[top] = w;
          callEdge[top] = at(outStart, w);
          order[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
        } else if (onStack[w] === 1 && at(order, w) < at(low, v)) {
          low[v] = at(order, w);
        }
        continue;
      }
      if (low[v] === order[v]) {
        let size = 0;
        for (let w = stack.pop(); w !== undefined; w = stack.pop()) {
          onStack[w] = 0;
          comp[w] = roots.length;
          size++;
          if (w === v) break;
        }
        roots.push(v);
        sizes.push(size);
      }
      top--;
      if (top >= 0) {
        const u = at(callNode, top);
        if (at(low, v) < at(low, u)) low[u] = at(low, v);
      }
    }
  }
  return { comp, roots, sizes };
}

/** A shortest cycle through `start` inside its component, by breadth-first search (linear in the component). */
function cycleThrough(core: GraphCore, comp: Int32Array, start: number, pred: Int32Array): number[] {
  const { outStart, outList } = core;
  const c = at(comp, start);
  const queue = [start];
  pred[start] = start;
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head] ?? start;
    for (let e = at(outStart, v); e < at(outStart, v + 1); e++) {
      const w = at(outList, e);
      if (isSelfEdge(core, v, w)) continue;
      if (w === start) {
        const path: number[] = [];
        for (let u = v; u !== start; u = at(pred, u)) path.push(u);
        path.push(start);
        return path.reverse();
      }
      if (comp[w] === c && pred[w] === -1) {
        pred[w] = v;
        queue.push(w);
      }
    }
  }
  return [start]; // unreachable for a component with a cycle
}

const byFirstStep = (a: readonly number[], b: readonly number[]): number => (a[0] ?? 0) - (b[0] ?? 0);

/**
 * Dependency cycles, at least one per strongly connected component that has one, in every part of the graph.
 * Each cycle lists real step ids in dependency order ([a, b, c]: a depends on b, b on c, c on a), starting at its
 * first step in plan order; a group on the cycle is shown once, by its id (a step "depends on" its group when it
 * is a child of it, and a group "depends on" its children). Each self-dependency is reported as [a], and the
 * other cycles are searched without those self-edges, so none of them exists only because of one. Cycles come
 * sorted by their first step; [] when acyclic. Iterative and linear.
 */
export function findCycles(graph: PlanGraph): string[][] {
  const core = coreOf(graph);
  const { n, ids, selfDependent } = core;
  const { comp, roots, sizes } = components(core);
  const cycles: number[][] = [];
  for (let i = 0; i < n; i++) if (selfDependent[i] === 1) cycles.push([i]);
  const pred = new Int32Array(2 * n).fill(-1);
  roots.forEach((root, c) => {
    if ((sizes[c] ?? 0) > 1) cycles.push(simplify(core, cycleThrough(core, comp, root, pred)));
  });
  return cycles.sort(byFirstStep).map((cycle) => cycle.map((i) => ids[i] ?? ''));
}

/**
 * Cycles in the parentId relation as written (unknown parents ignored; a parent that is not a group still counts),
 * each as [a, b, c]: a's parent is b, b's is c, c's is a; [a] when a step is its own parent. Linear.
 */
export function parentCycles(graph: PlanGraph): string[][] {
  const { ids, rawParent } = coreOf(graph);
  const state = new Uint8Array(ids.length); // 0 unseen, 1 on the current walk, 2 settled
  const cycles: number[][] = [];
  const walk: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    let v = i;
    while (v >= 0 && state[v] === 0) {
      state[v] = 1;
      walk.push(v);
      v = at(rawParent, v);
    }
    if (v >= 0 && state[v] === 1) cycles.push(walk.slice(walk.indexOf(v)));
    for (const u of walk) state[u] = 2;
    walk.length = 0;
  }
  return cycles
    .map((cycle) => {
      let first = 0;
      for (let k = 1; k < cycle.length; k++) if ((cycle[k] ?? 0) < (cycle[first] ?? 0)) first = k;
      return [...cycle.slice(first), ...cycle.slice(0, first)];
    })
    .sort(byFirstStep)
    .map((cycle) => cycle.map((i) => ids[i] ?? ''));
}
