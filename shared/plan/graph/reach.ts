import { at, coreOf, type GraphCore, isExecutableNode, type PlanGraph, startNode } from './core.ts';
import { stepRank } from './order.ts';

type Edges = Pick<GraphCore, 'outStart' | 'outList'>;

const forward = (core: GraphCore): Edges => core;
const backward = (core: GraphCore): Edges => ({ outStart: core.inStart, outList: core.inList });

/**
 * Executable steps one effective edge away from the given nodes: walks through group (virtual) nodes and stops
 * at the first executable step on each path. Proportional to the part of the graph it touches.
 */
function nearestExecutables(core: GraphCore, edges: Edges, from: readonly number[]): number[] {
  const { outStart, outList } = edges;
  const seen = new Set<number>();
  const found: number[] = [];
  const stack: number[] = [];
  for (const v of from) for (let e = at(outStart, v); e < at(outStart, v + 1); e++) stack.push(at(outList, e));
  for (let v = stack.pop(); v !== undefined; v = stack.pop()) {
    if (seen.has(v)) continue;
    seen.add(v);
    if (isExecutableNode(core, v)) found.push(v);
    else for (let e = at(outStart, v); e < at(outStart, v + 1); e++) stack.push(at(outList, e));
  }
  return found.sort((a, b) => a - b);
}

/** Every node reachable from the given nodes by at least one edge. */
function reachable(edges: Edges, from: readonly number[]): Set<number> {
  const { outStart, outList } = edges;
  const seen = new Set<number>();
  const stack: number[] = [];
  for (const v of from) for (let e = at(outStart, v); e < at(outStart, v + 1); e++) stack.push(at(outList, e));
  for (let v = stack.pop(); v !== undefined; v = stack.pop()) {
    if (seen.has(v)) continue;
    seen.add(v);
    for (let e = at(outStart, v); e < at(outStart, v + 1); e++) stack.push(at(outList, e));
  }
  return seen;
}

/**
 * The executable steps that `id` directly waits for, with group dependencies expanded to their executable
 * descendants and the dependencies of its ancestor groups included; deduplicated, in plan order. For a group id:
 * what each of its descendants inherits from it (its own and its ancestors' dependencies, expanded). [] for an
 * unknown id.
 */
export function effectiveUpstream(graph: PlanGraph, id: string): string[] {
  const core = coreOf(graph);
  const i = core.index.get(id);
  if (i === undefined) return [];
  return nearestExecutables(core, forward(core), [startNode(core, i)]).map((v) => core.ids[v] ?? '');
}

/**
 * The inverse of effectiveUpstream: executable steps whose effective upstream contains `id`, in plan order. For a
 * group id: the executable steps that wait for the whole group, i.e. that depend, themselves or through an
 * ancestor group's dependsOn, on the group or on a group that contains it.
 */
export function effectiveDownstream(graph: PlanGraph, id: string): string[] {
  const core = coreOf(graph);
  const i = core.index.get(id);
  if (i === undefined) return [];
  return nearestExecutables(core, backward(core), [i]).map((v) => core.ids[v] ?? '');
}

/**
 * Every step (executable or group) that `id` transitively depends on: a group counts when something on the way
 * depends on the whole group, not merely because `id` sits inside it. `id` itself is left out; plan order. For a group id:
 * what the group waits for before any of its descendants may start. Empty for an unknown id.
 */
export function upstreamClosure(graph: PlanGraph, id: string): Set<string> {
  const core = coreOf(graph);
  const i = core.index.get(id);
  const out = new Set<string>();
  if (i === undefined) return out;
  const steps = [...reachable(forward(core), [startNode(core, i)])].filter((v) => v < core.n && v !== i);
  for (const v of steps.sort((a, b) => a - b)) out.add(core.ids[v] ?? '');
  return out;
}

/**
 * Every executable step that transitively depends on `id` (`id` itself excluded), in topological order (plan
 * order when the graph is cyclic). For a group id: the union of the downstream closures of its executable
 * descendants, which includes descendants that depend on other descendants.
 */
export function downstreamClosure(graph: PlanGraph, id: string): string[] {
  const core = coreOf(graph);
  const i = core.index.get(id);
  if (i === undefined) return [];
  const sources: number[] = [];
  if (core.group[i] === 0) sources.push(i);
  else for (const d of graph.executableDescendants(id)) sources.push(core.index.get(d) ?? i);
  const rank = stepRank(core);
  const found: number[] = [];
  for (const v of reachable(backward(core), sources)) if (isExecutableNode(core, v) && v !== i) found.push(v);
  return found.sort((a, b) => at(rank, a) - at(rank, b)).map((v) => core.ids[v] ?? '');
}
