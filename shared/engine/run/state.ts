/**
 * A run as its decider holds it: the run record, every step record of the current plan and every approval, at one
 * version. Only the decider's events change it (evolve.ts); the shell loads it, hands it commands one at a time,
 * commits the events and writes the records back as they now are (the projections everything else reads).
 *
 * The records are the store's own shapes (shared/ports/records), so a state loaded from the store and a state built
 * by events are the same thing, and what the API shows is what the decider decided from.
 */

import { buildGraph, effectiveDownstream, effectiveUpstream, type PlanGraph } from '../../plan/graph.ts';
import type { Plan, PlanStep, SideEffect, StepStatus } from '../../plan/schema.ts';
import type { ApprovalRecord } from '../../ports/records/approvals.ts';
import type { RunRecord } from '../../ports/records/runs.ts';
import type { StepRecord } from '../../ports/records/steps.ts';

/** Settings a run keeps from its start, so that replaying its events decides the same way. */
export interface RunSettings {
  /** Revisions the replanner may make (0: replanning is off). */
  readonly maxReplans: number;
  readonly runDeadlineSeconds: number;
  /** A gate's or review's window when the step names none (absent: the run's deadline). */
  readonly approvalTimeoutSeconds?: number | undefined;
  /** How long a final failure waits for the replanner's answer before it stands. */
  readonly replanWatchSeconds: number;
  readonly retry: { readonly baseSeconds: number; readonly capSeconds: number };
  readonly traceRetention: 'last' | 'full';
}

/** What the decider needs to know of a capability: whether undoing it matters, and whether it can be undone. */
export interface TargetFacts {
  readonly sideEffect: SideEffect;
  /** The target that undoes it (its capability's `compensate.target`), if any. */
  readonly compensateTarget?: string | undefined;
}

/** A plan revision as the decider reads it: immutable, built once per revision and shared. */
export interface PlanView {
  readonly plan: Plan;
  readonly graph: PlanGraph;
  readonly byId: ReadonlyMap<string, PlanStep>;
  /** Executable steps (not groups), in plan order. */
  readonly executable: readonly string[];
  /** Executable steps nothing waits for. */
  readonly sinks: readonly string[];
  readonly upstream: (stepId: string) => readonly string[];
  readonly downstream: (stepId: string) => readonly string[];
  readonly target: (targetId: string | null) => TargetFacts | undefined;
}

/** Builds the view of a revision; `targets` says what the catalog knows of each target. */
export function planView(
  plan: Plan,
  targets: (targetId: string) => TargetFacts | undefined = () => undefined,
): PlanView {
  const graph = buildGraph(plan.steps);
  const executable = graph.executableIds();
  const upstreamOf = new Map<string, readonly string[]>();
  const downstreamOf = new Map<string, readonly string[]>();
  const memo = (cache: Map<string, readonly string[]>, make: (id: string) => string[]) => (id: string) => {
    let known = cache.get(id);
    if (known === undefined) {
      known = make(id);
      cache.set(id, known);
    }
    return known;
  };
  const downstream = memo(downstreamOf, (id) => effectiveDownstream(graph, id));
  return {
    plan,
    graph,
    byId: new Map(plan.steps.map((s) => [s.id, s])),
    executable,
    sinks: executable.filter((id) => downstream(id).length === 0),
    upstream: memo(upstreamOf, (id) => effectiveUpstream(graph, id)),
    downstream,
    target: (targetId) => (targetId === null ? undefined : targets(targetId)),
  };
}

/** The run at one version. `plan` is the current revision's view (absent while planning). */
export interface RunState {
  readonly version: number;
  readonly run: RunRecord;
  readonly steps: ReadonlyMap<string, StepRecord>;
  readonly approvals: ReadonlyMap<string, ApprovalRecord>;
  readonly plan?: PlanView | undefined;
  readonly settings: RunSettings;
  /** How a revision's view is built (the catalog's facts about targets go in): the same for every replay. */
  readonly viewOf: (plan: Plan) => PlanView;
}

/** The same state, open for the decider's own changes while it decides one command (see decide.ts). */
export interface DraftState {
  version: number;
  run: RunRecord;
  steps: Map<string, StepRecord>;
  approvals: Map<string, ApprovalRecord>;
  plan?: PlanView | undefined;
  settings: RunSettings;
  readonly viewOf: (plan: Plan) => PlanView;
  /** Steps open (waiting, started, in flight) and in flight (running, retrying): kept by evolve, read by the look at the run's end. */
  open: number;
  inFlight: number;
  /** Steps by status, kept by evolve: committed with each batch, for lists that read no step. */
  counts: Partial<Record<StepStatus, number>>;
}

const OPEN: ReadonlySet<string> = new Set(['pending', 'ready', 'running', 'retrying', 'awaiting_approval']);
const IN_FLIGHT: ReadonlySet<string> = new Set(['running', 'retrying']);

/** Whether a step in `status` counts as open, and as in flight. */
export const countsOf = (status: string): { open: number; inFlight: number } => ({
  open: OPEN.has(status) ? 1 : 0,
  inFlight: IN_FLIGHT.has(status) ? 1 : 0,
});

/**
 * A copy to change: the maps are copied, the records are replaced whole when they change, never mutated. The shell
 * keeps one draft per run across the commands of a batch (one copy per batch, not per command).
 */
export function draftOf(state: RunState): DraftState {
  let open = 0;
  let inFlight = 0;
  const counts: Partial<Record<StepStatus, number>> = {};
  for (const step of state.steps.values()) {
    const kind = countsOf(step.status);
    open += kind.open;
    inFlight += kind.inFlight;
    counts[step.status] = (counts[step.status] ?? 0) + 1;
  }
  return {
    open,
    inFlight,
    counts,
    version: state.version,
    run: state.run,
    steps: new Map(state.steps),
    approvals: new Map(state.approvals),
    plan: state.plan,
    settings: state.settings,
    viewOf: state.viewOf,
  };
}
