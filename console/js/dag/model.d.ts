/** Types of model.js for the TypeScript tests and bench (the console itself is plain ES modules). */
import type { ConsoleStep, StatusCounts } from './collapse.js';

export interface VisibleNode {
  readonly id: string;
  readonly kind: 'step' | 'group' | 'folded';
  readonly parent: string | null;
  readonly step: ConsoleStep;
  readonly size: number;
  readonly counts?: StatusCounts;
}
export interface VisibleEdge {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly count: number;
}
export interface VisibleGraph {
  readonly nodes: VisibleNode[];
  readonly edges: VisibleEdge[];
}

export const NODE_WIDTH: number;
export const NODE_HEIGHT: number;
export const GROUP_HEADER: number;
export function isGroup(step: ConsoleStep): boolean;
export function defaultCollapsed(steps: readonly ConsoleStep[], maxNodes?: number): Set<string>;
export function visibleGraph(steps: readonly ConsoleStep[], collapsed: ReadonlySet<string>): VisibleGraph;
export function structureKey(graph: VisibleGraph): string;
export function elkGraph(graph: VisibleGraph, padding?: string): unknown;
export function readLayout(laidOut: unknown): {
  width: number;
  height: number;
  boxes: Map<string, { x: number; y: number; width: number; height: number; depth: number }>;
  edges: { id: string; points: { x: number; y: number }[] }[];
};
