/**
 * Graph helpers over a plan's steps: cycles, topological order, depth, critical path, reachability and
 * scheduling. Steps form a tree (parentId, groups) as well as a DAG (dependsOn); see graph/core.ts for how
 * groups are represented so that every algorithm stays linear in steps + edges.
 */
export { buildGraph, type GraphStep, type PlanGraph } from './graph/core.ts';
export { findCycles, parentCycles } from './graph/cycles.ts';
export { criticalPath, depth, topologicalOrder } from './graph/order.ts';
export { downstreamClosure, effectiveDownstream, effectiveUpstream, upstreamClosure } from './graph/reach.ts';
export { groupStatus, readySet } from './graph/status.ts';
