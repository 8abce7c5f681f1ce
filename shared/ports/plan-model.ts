/**
 * The model port: whatever proposes a plan for an objective. Adapters: Amazon Bedrock Converse (deployed) and the
 * deterministic HTN method library (embedded default). A model only proposes: the planner validates every answer as
 * untrusted input, so an adapter returns the candidate exactly as the model gave it.
 */
import type { Budget, Capability, Plan } from '../plan/schema.ts';
import type { PlanLimits } from '../plan/validate.ts';

/** One executed step, summarised for a replan prompt (finished subtrees collapse to one line each). */
export interface PlanHistoryEntry {
  readonly stepId: string;
  readonly title: string;
  readonly target: string | null;
  readonly status: string;
  readonly summary?: string;
}

/**
 * What led to a replan (issue 4): the first four come from a failed step, `budget` from a step over its own budget
 * or from the plan's (a BudgetReplanRequest), `manual` from a person.
 */
export type ReplanTrigger =
  | 'step_failed'
  | 'verify_failed'
  | 'approval_rejected'
  | 'capability_unavailable'
  | 'budget'
  | 'manual';

/** Why a replan was asked for: the failing step and what went wrong. */
export interface PlanDiagnosis {
  readonly stepId: string;
  readonly code: string;
  readonly message: string;
  readonly target?: string;
  readonly title?: string;
  /** The id the step descends from across revisions (its own id unless a replan replaced an earlier step). */
  readonly lineage?: string;
  readonly trigger?: ReplanTrigger;
  readonly retryable?: boolean;
  readonly attempts?: number;
  /** The step's last trace entries, formatted and clipped, oldest first. */
  readonly trace?: readonly string[];
  /** Executable steps already finished (succeeded or skipped): they are kept as they are. */
  readonly finished?: readonly string[];
  /** Executable steps downstream of the failure that have not finished: they wait for the replan. */
  readonly blocked?: readonly string[];
}

/**
 * The steps a replan may change: the failed steps and their downstream closure; every other step is frozen. A
 * person's replan without a failure to answer (or with a new objective) opens the whole plan instead.
 */
export interface ReplanScope {
  /** The failed steps the scope grew from (known executable ids, plan order). */
  readonly failed: readonly string[];
  /** Every step id in scope, executable steps and the groups all of whose executable descendants are in scope. */
  readonly steps: readonly string[];
  /**
   * A person's replan: finished steps in scope may change too (they run again, with what is downstream of them);
   * none may be removed. Absent: finished steps are frozen.
   */
  readonly finishedMayChange?: boolean;
  /** A person's replan with a new objective: the objective the revision is for. Absent: the run's objective. */
  readonly objective?: string;
}

/** A person's replan (`POST /runs/{id}/replan`): why, and optionally the objective the run should now serve. */
export interface RequestedReplan {
  readonly reason: string;
  readonly objective?: string;
}

/** What one replan changed, recorded so a later replan of the same run does not try it again. */
export type ReplanChange =
  | { readonly kind: 'substitute'; readonly stepId: string; readonly from: string; readonly to: string }
  | {
      readonly kind: 'method';
      readonly path: string;
      readonly task: string;
      readonly from: string;
      readonly to?: string;
    }
  | { readonly kind: 'rewrite' }
  /** A budget replan's cheaper revision: steps not yet run dropped, or held to a share of what is left. */
  | { readonly kind: 'budget'; readonly dropped: readonly string[]; readonly capped: readonly string[] };

/** One limit of the plan's budget at the replan: the limit, and what the run had spent of it (or seconds elapsed). */
export interface BudgetFigureView {
  readonly dimension: 'tokens' | 'costUsd' | 'seconds';
  readonly limit: number;
  readonly spent: number;
}

/**
 * A budget replan (`budget.onExhausted: "replan"`): the plan's budget ran out and the planner is asked, once per run,
 * for a cheaper revision of the steps that have not run. The run's spend is never reset, so the revision gets the
 * budget `revised` (the engine's, not the planner's): what was spent plus `allowance`, the most the revision's
 * remaining steps may spend before the run ends `budget_exhausted`.
 */
export interface BudgetReplanRequest {
  readonly trigger: Extract<ReplanTrigger, 'budget'>;
  /** Every limit of the budget, with its figure; `exhausted` are those reached. */
  readonly figures: readonly BudgetFigureView[];
  readonly exhausted: readonly BudgetFigureView[];
  /** The budget revision n+1 carries. */
  readonly revised: Budget;
  /** Per dimension, what the revision's steps not yet run may spend in all (revised limit minus spent). */
  readonly allowance: Readonly<Partial<Record<BudgetFigureView['dimension'], number>>>;
}

/** An earlier replan of the run, oldest first: the failure it answered and what it changed. */
export interface PriorReplan {
  /** The revision that replan produced. */
  readonly revision: number;
  readonly stepId: string;
  /** The target that had failed. */
  readonly target?: string;
  readonly code: string;
  readonly change: ReplanChange;
  /** New step id → the id it took over from (its lineage continues). */
  readonly replaces?: Readonly<Record<string, string>>;
}

export interface PlanModelRequest {
  readonly objective: string;
  /** The capabilities a plan may use: targets, descriptions, contracts, side effects, alternatives. */
  readonly catalog: readonly Capability[];
  /** The plan format's JSON Schema (planJsonSchema()): the shape the answer must have. */
  readonly planSchema: Record<string, unknown>;
  /** The limits the plan must respect (validation rejects a plan over them). */
  readonly limits: PlanLimits;
  /** Replanning only: the plan being revised. Absent for a first plan. */
  readonly previousPlan?: Plan;
  /** Replanning only: what already ran. */
  readonly history?: readonly PlanHistoryEntry[];
  /** Replanning only: the failure that triggered the replan (absent for a person's replan with no failure). */
  readonly diagnosis?: PlanDiagnosis;
  /** Replanning only: the steps the new plan may change (the rest must be copied verbatim). */
  readonly scope?: ReplanScope;
  /** Replanning only: the run's earlier replans, oldest first (what was already tried). */
  readonly replans?: readonly PriorReplan[];
  /** Replanning only: a person asked for this replan, with this reason (and maybe a new objective). */
  readonly requested?: RequestedReplan;
  /** Replanning only: the plan's budget ran out; a cheaper revision of what has not run is asked for. */
  readonly budget?: BudgetReplanRequest;
}

/** A model's answer to a replan: the candidate plan (untrusted) and, when the model can tell, what it changed. */
export interface ReplanProposal {
  readonly plan: unknown;
  readonly change?: ReplanChange;
  readonly replaces?: Readonly<Record<string, string>>;
}

export interface PlanModel {
  /** A short name for logs and traces, e.g. `htn` or `bedrock:<modelId>`. */
  readonly name: string;
  /** The candidate plan as the model gave it (untrusted); rejects with PlannerError or ModelError when there is none. */
  proposePlan(request: PlanModelRequest): Promise<unknown>;
  /** Optional: a replan with a record of what changed. Models without it are asked through proposePlan. */
  proposeReplan?(request: PlanModelRequest): Promise<ReplanProposal>;
}
