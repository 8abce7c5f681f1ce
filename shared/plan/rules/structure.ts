/**
 * Rules about how steps relate: unique ids, known dependencies, the group tree (parentId) and the dependency
 * graph (cycles, depth). The graph algorithms are graph.ts's; this file only turns their answers into issues
 * that point at the field to fix.
 */
import { buildGraph, criticalPath, depth, findCycles, type GraphStep, type PlanGraph, parentCycles } from '../graph.ts';
import { child, type IssueSink, issue } from '../issues.ts';
import type { StepView } from './shape.ts';

export interface StructureResult {
  readonly graph: PlanGraph;
  /** The step that owns each id: the first one when the id is duplicated. */
  readonly byId: ReadonlyMap<string, StepView>;
  /** Ids used by more than one step: the graph cannot tell those steps apart. */
  readonly duplicated: ReadonlySet<string>;
  /** Whether a dependency or group cycle exists (upstream questions have no clean answer then). */
  readonly cyclic: boolean;
}

const arrow = (ids: readonly string[]): string => [...ids, ids[0]].join(' -> ');

/** Where to point for the edge "from waits for to" on a cycle: the dependsOn entry, or the parentId. */
function edgePath(from: StepView, to: StepView | undefined): string {
  if (to?.id !== undefined) {
    const k = from.dependsOn.indexOf(to.id);
    if (k >= 0) return child(child(from.path, 'dependsOn'), k);
    if (from.parentId === to.id) return child(from.path, 'parentId');
  }
  return from.path;
}

export function checkStructure(steps: readonly StepView[], issues: IssueSink): StructureResult {
  const byId = new Map<string, StepView>();
  const duplicated = new Set<string>();
  for (const step of steps) {
    if (step.id === undefined) continue;
    const first = byId.get(step.id);
    if (first) {
      duplicated.add(step.id);
      issues.push(
        issue('E_DUPLICATE_ID', child(step.path, 'id'), `duplicate step id "${step.id}" (first used at ${first.path})`),
      );
    } else byId.set(step.id, step);
  }

  const childCount = new Map<string, number>();
  for (const step of steps) {
    const seen = new Set<string>();
    step.dependsOn.forEach((dep, k) => {
      if (typeof dep !== 'string') return;
      const at = child(child(step.path, 'dependsOn'), k);
      if (seen.has(dep)) issues.push(issue('E_FIELD', at, `"${dep}" is listed twice in dependsOn`));
      seen.add(dep);
      if (dep === step.id) issues.push(issue('E_SELF_DEPENDENCY', at, `step "${dep}" depends on itself`));
      else if (!byId.has(dep)) issues.push(issue('E_UNKNOWN_DEPENDENCY', at, `unknown step "${dep}" in dependsOn`));
    });
    if (step.parentId === undefined) continue;
    const at = child(step.path, 'parentId');
    const parent = byId.get(step.parentId);
    if (step.parentId === step.id) issues.push(issue('E_PARENT', at, `step "${step.id}" is its own parent`));
    else if (!parent) issues.push(issue('E_PARENT', at, `unknown parent "${step.parentId}"`));
    else if (parent.target !== null)
      issues.push(issue('E_PARENT', at, `parent "${step.parentId}" is not a group (its target is not null)`));
    if (step.parentId !== step.id) childCount.set(step.parentId, (childCount.get(step.parentId) ?? 0) + 1);
  }
  for (const step of steps)
    if (step.target === null && step.id !== undefined && !duplicated.has(step.id) && !childCount.has(step.id))
      issues.push(issue('E_PARENT', step.path, `group "${step.id}" is empty: no step names it as parentId`));

  const graphSteps: GraphStep[] = [];
  for (const step of steps) {
    if (step.id === undefined) continue;
    graphSteps.push({
      id: step.id,
      dependsOn: step.dependsOn.filter((d): d is string => typeof d === 'string'),
      parentId: step.parentId,
      target: step.target === undefined ? '' : step.target,
    });
  }
  const graph = buildGraph(graphSteps);
  for (const cycle of parentCycles(graph)) {
    if (cycle.length < 2) continue; // "its own parent", reported above
    const first = byId.get(cycle[0] ?? '');
    if (first) issues.push(issue('E_PARENT', child(first.path, 'parentId'), `parent cycle: ${arrow(cycle)}`));
  }
  const cycles = findCycles(graph);
  for (const cycle of cycles) {
    if (cycle.length < 2) continue; // a self-dependency, reported above
    const first = byId.get(cycle[0] ?? '');
    if (first) issues.push(issue('E_CYCLE', edgePath(first, byId.get(cycle[1] ?? '')), `cycle: ${arrow(cycle)}`));
  }
  return { graph, byId, duplicated, cyclic: cycles.length > 0 };
}

/** E_TOO_DEEP when the longest dependency path holds more executable steps than allowed (acyclic graphs only). */
export function checkDepth(result: StructureResult, maxDepth: number, issues: IssueSink): void {
  if (result.cyclic) return;
  const found = depth(result.graph);
  if (found <= maxDepth) return;
  const path = criticalPath(result.graph, () => 1).steps;
  const last = result.byId.get(path[path.length - 1] ?? '');
  const shown = path.length > 8 ? [...path.slice(0, 3), '…', ...path.slice(-3)] : path;
  issues.push(
    issue(
      'E_TOO_DEEP',
      last?.path ?? '/steps',
      `dependency depth ${found} exceeds the limit of ${maxDepth}: ${shown.join(' -> ')}`,
    ),
  );
}
