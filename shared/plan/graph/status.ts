import type { StepStatus } from '../schema.ts';
import { at, coreOf, type PlanGraph } from './core.ts';

const isDone = (status: StepStatus | undefined): boolean => status === 'succeeded' || status === 'skipped';

/**
 * Executable steps that may start now, in plan order: status 'pending' (or no status yet) and every effective
 * upstream step 'succeeded' or 'skipped'. A group counts as done when all of its executable descendants are done
 * (vacuously, when it has none). Linear in steps + edges: group completion is computed once, bottom-up over the
 * tree, and whether a group may be entered once, top-down; no group is ever expanded.
 */
export function readySet(graph: PlanGraph, statuses: ReadonlyMap<string, StepStatus>): string[] {
  const { n, ids, group, parent, treeOrder, outStart, outList } = coreOf(graph);
  const done = new Uint8Array(n); // executable: succeeded or skipped; group: every descendant done
  for (let i = 0; i < n; i++) done[i] = group[i] === 1 || isDone(statuses.get(ids[i] ?? '')) ? 1 : 0;
  for (let k = n - 1; k >= 0; k--) {
    const v = at(treeOrder, k);
    const p = at(parent, v);
    if (p >= 0 && done[v] === 0) done[p] = 0;
  }
  const open = new Uint8Array(n); // a group whose own and inherited dependencies are done
  const waitsOnlyForDone = (node: number): boolean => {
    for (let e = at(outStart, node); e < at(outStart, node + 1); e++) {
      const w = at(outList, e);
      if (w >= n ? open[w - n] === 0 : done[w] === 0) return false;
    }
    return true;
  };
  for (const v of treeOrder) if (group[v] === 1) open[v] = waitsOnlyForDone(n + v) ? 1 : 0;
  const ready: string[] = [];
  for (let i = 0; i < n; i++) {
    if (group[i] === 1) continue;
    const status = statuses.get(ids[i] ?? '');
    if ((status === undefined || status === 'pending') && waitsOnlyForDone(i)) ready.push(ids[i] ?? '');
  }
  return ready;
}

/**
 * The status of a group, derived from its executable descendants (a missing status counts as 'pending'). The
 * first rule that matches wins:
 * 1. 'superseded' descendants are ignored; if nothing is left: 'superseded' when there were some, else
 *    'skipped' (an empty group has nothing to do);
 * 2. any 'failed' -> 'failed' (the group can no longer succeed, even while siblings still run);
 * 3. any 'running', 'retrying' or 'awaiting_approval' -> 'running';
 * 4. any 'blocked' -> 'blocked';
 * 5. any 'cancelled' -> 'cancelled';
 * 6. some 'pending'/'ready' and some finished ('succeeded'/'skipped') -> 'running' (the group is under way);
 * 7. any 'ready' -> 'ready'; any 'pending' -> 'pending';
 * 8. all 'skipped' -> 'skipped'; otherwise (all succeeded or skipped, at least one succeeded) -> 'succeeded'.
 * For an executable id this is its own status ('pending' when missing); 'pending' for an unknown id.
 */
export function groupStatus(graph: PlanGraph, id: string, statuses: ReadonlyMap<string, StepStatus>): StepStatus {
  if (!graph.has(id)) return 'pending';
  if (!graph.isGroup(id)) return statuses.get(id) ?? 'pending';
  const seen = new Set<StepStatus>();
  let superseded = false;
  for (const d of graph.executableDescendants(id)) {
    const status = statuses.get(d) ?? 'pending';
    if (status === 'superseded') superseded = true;
    else seen.add(status);
  }
  if (seen.size === 0) return superseded ? 'superseded' : 'skipped';
  if (seen.has('failed')) return 'failed';
  if (seen.has('running') || seen.has('retrying') || seen.has('awaiting_approval')) return 'running';
  if (seen.has('blocked')) return 'blocked';
  if (seen.has('cancelled')) return 'cancelled';
  const waiting = seen.has('pending') || seen.has('ready');
  const finished = seen.has('succeeded') || seen.has('skipped');
  if (waiting && finished) return 'running';
  if (seen.has('ready')) return 'ready';
  if (seen.has('pending')) return 'pending';
  return seen.has('succeeded') ? 'succeeded' : 'skipped';
}
