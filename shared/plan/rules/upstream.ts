/**
 * Answers many "is X upstream of s?" questions at once, for the expression rule. Asking graph.ts for the upstream
 * closure of every step that reads a distant step would cost steps × closure size; instead, one pass in
 * topological order carries, per step, a bitset over just the steps being asked about. Cost: (steps + edges) ×
 * (distinct steps asked about) / 32 word operations; memory is bounded, and beyond the bound each question falls
 * back to graph.ts's upstreamClosure.
 *
 * Upstream means what graph.ts's upstreamClosure means (a property test holds the two equal):
 *   up(s)   = ∪ done(d) for each d in s.dependsOn, ∪ up(parent group of s)
 *   done(x) = up(x) ∪ {x} for an executable step; {G} ∪ done(c) for each child c, for a group G.
 */
import { type PlanGraph, topologicalOrder, upstreamClosure } from '../graph.ts';

// Two bitset tables of this many 32-bit words at most (2 × 16 MB).
const MAX_WORDS = 1 << 22;

export class UpstreamIndex {
  readonly #graph: PlanGraph;
  readonly #row = new Map<string, number>();
  readonly #column = new Map<string, number>();
  #up: Uint32Array | undefined;
  #words = 0;
  readonly #closures = new Map<string, Set<string>>();

  /** `dependsOn(id)` gives a step's dependencies as written; the graph ignores the unknown ones, so do we. */
  constructor(graph: PlanGraph, targets: Iterable<string>, dependsOn: (id: string) => readonly string[]) {
    this.#graph = graph;
    for (const target of targets) if (!this.#column.has(target)) this.#column.set(target, this.#column.size);
    const order = topologicalOrder(graph);
    const words = Math.ceil(this.#column.size / 32);
    if (order === null || words === 0 || order.length * words > MAX_WORDS) return;
    this.#words = words;
    order.forEach((id, i) => {
      this.#row.set(id, i);
    });
    const up = new Uint32Array(order.length * words);
    const done = new Uint32Array(order.length * words);
    const doneReady = new Uint8Array(order.length);
    const orInto = (into: Uint32Array, at: number, from: Uint32Array, fromAt: number): void => {
      for (let w = 0; w < words; w += 1) into[at + w] = (into[at + w] ?? 0) | (from[fromAt + w] ?? 0);
    };
    const setBit = (into: Uint32Array, at: number, id: string): void => {
      const column = this.#column.get(id);
      if (column !== undefined) into[at + (column >>> 5)] = (into[at + (column >>> 5)] ?? 0) | (1 << (column & 31));
    };
    // A group's done set is complete once all of its descendants are placed, which topological order guarantees
    // before anything that depends on the group; it is filled on first use, children first, without recursion.
    const ensureDone = (rootRow: number): void => {
      const stack = [rootRow];
      while (stack.length > 0) {
        const row = stack[stack.length - 1] ?? 0;
        const id = order[row] ?? '';
        const pending = graph.children(id).filter((c) => doneReady[this.#row.get(c) ?? 0] === 0);
        if (pending.length > 0) {
          for (const c of pending) stack.push(this.#row.get(c) ?? 0);
          continue;
        }
        stack.pop();
        if (doneReady[row] === 1) continue;
        setBit(done, row * words, id);
        for (const c of graph.children(id)) orInto(done, row * words, done, (this.#row.get(c) ?? 0) * words);
        doneReady[row] = 1;
      }
    };
    order.forEach((id, row) => {
      const at = row * words;
      for (const dep of dependsOn(id)) {
        const depRow = this.#row.get(dep);
        if (depRow === undefined || depRow === row) continue;
        if (doneReady[depRow] === 0) ensureDone(depRow);
        orInto(up, at, done, depRow * words);
      }
      const parent = graph.parentOf(id);
      const parentRow = parent === undefined ? undefined : this.#row.get(parent);
      if (parentRow !== undefined) orInto(up, at, up, parentRow * words);
      if (!graph.isGroup(id)) {
        orInto(done, at, up, at);
        setBit(done, at, id);
        doneReady[row] = 1;
      }
    });
    this.#up = up;
  }

  /** Whether `target` is upstream of step `id` (false for unknown ids, and for the step itself). */
  has(id: string, target: string): boolean {
    // An empty group that depends on what depends on it would otherwise count itself (it is no cycle).
    if (id === target) return false;
    const row = this.#row.get(id);
    const column = this.#column.get(target);
    if (this.#up !== undefined && row !== undefined && column !== undefined) {
      const word = this.#up[row * this.#words + (column >>> 5)] ?? 0;
      return (word & (1 << (column & 31))) !== 0;
    }
    let closure = this.#closures.get(id);
    if (!closure) {
      closure = upstreamClosure(this.#graph, id);
      this.#closures.set(id, closure);
    }
    return closure.has(target);
  }
}
