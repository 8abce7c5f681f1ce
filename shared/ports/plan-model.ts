/**
 * The model port: whatever proposes a plan for an objective. Adapters: Amazon Bedrock Converse (deployed) and the
 * deterministic HTN method library (embedded default). A model only proposes: the planner validates every answer as
 * untrusted input, so an adapter returns the candidate exactly as the model gave it.
 */
import type { Capability, Plan } from '../plan/schema.ts';
import type { PlanLimits } from '../plan/validate.ts';

/** One executed step, summarised for a replan prompt (finished subtrees collapse to one line each). */
export interface PlanHistoryEntry {
  readonly stepId: string;
  readonly title: string;
  readonly target: string | null;
  readonly status: string;
  readonly summary?: string;
}

/** Why a replan was asked for: the failing step and what went wrong. */
export interface PlanDiagnosis {
  readonly stepId: string;
  readonly code: string;
  readonly message: string;
  readonly target?: string;
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
  /** Replanning only: the failure that triggered the replan. */
  readonly diagnosis?: PlanDiagnosis;
}

export interface PlanModel {
  /** A short name for logs and traces, e.g. `htn` or `bedrock:<modelId>`. */
  readonly name: string;
  /** The candidate plan as the model gave it (untrusted); rejects with PlannerError or ModelError when there is none. */
  proposePlan(request: PlanModelRequest): Promise<unknown>;
}
