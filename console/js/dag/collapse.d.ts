/** Types of collapse.js for the TypeScript tests and bench (the console itself is plain ES modules). */
export interface ConsoleStep {
  readonly id: string;
  readonly title: string;
  readonly target: string | null;
  readonly parentId: string | null;
  readonly dependsOn: readonly string[];
  readonly status: string;
  readonly virtual?: boolean;
}

export type StatusCounts = Record<string, number>;

export const MAX_NODES: number;
export const VIRTUAL_PREFIX: string;
export function isVirtual(id: string): boolean;
export function aggregateStatus(counts: StatusCounts): string;
export function groupParents(steps: readonly ConsoleStep[]): Map<string, string>;
export function topologicalLayers(steps: readonly ConsoleStep[], parentOf?: Map<string, string>): Map<string, number>;
export function withOverviewGroups<S extends ConsoleStep>(steps: readonly S[], maxNodes?: number): (S | ConsoleStep)[];
export function leafCounts(steps: readonly ConsoleStep[], parentOf?: Map<string, string>): Map<string, StatusCounts>;
