/** Types of incremental.js for the TypeScript tests and bench (the console itself is plain ES modules). */
import type { VisibleGraph } from './model.js';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
  depth: number;
}
export interface Layout {
  width: number;
  height: number;
  boxes: Map<string, Box>;
  edges: { id: string; key?: string; points: { x: number; y: number }[] }[];
}

export const CLUSTER_PADDING: { top: number; left: number; bottom: number; right: number };
export function descendantsOf(graph: VisibleGraph, groupId: string): Set<string>;
export function innerGraph(graph: VisibleGraph, groupId: string): VisibleGraph;
export function elbow(
  a: { x: number; y: number; width: number; height: number },
  b: { x: number; y: number; width: number; height: number },
): { x: number; y: number }[];
export function resize(
  prev: Layout,
  prevGraph: VisibleGraph,
  next: VisibleGraph,
  groupId: string,
  inner?: Layout,
): Layout | null;
export function keyInnerEdges(laidOut: Layout, graph: VisibleGraph): Layout;
