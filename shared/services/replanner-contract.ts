/**
 * What the replanner is to its callers (the StepFailed subscriber, the API's replan route and revision decisions):
 * its dependencies, the failure it is handed, and what it answers. The replanner itself is replanner.ts.
 */
import type { PlanModel } from '../ports/plan-model.ts';
import type { CoordinatorDeps } from './coordinator-types.ts';
import type { RevisionDecision } from './revision-approvals.ts';

export interface ReplannerDeps extends CoordinatorDeps {
  /** The planning model: the HTN method library embedded, Bedrock when a model id is configured. */
  readonly model: PlanModel;
  /** Wait before looking again after losing a revision race, per try (ms; default 100). */
  readonly raceDelayMs?: number;
}

export interface StepFailedRef {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
}

export type ReplanOutcome =
  | { readonly outcome: 'revised'; readonly revision: number }
  | { readonly outcome: 'paused'; readonly reason: 'max_replans' | 'no_progress' }
  | { readonly outcome: 'declined'; readonly code: string; readonly message: string }
  | { readonly outcome: 'awaiting_approval'; readonly approvalId: string }
  | { readonly outcome: 'ignored'; readonly why: 'disabled' | 'duplicate' | 'stale' | 'run_ended' | 'lost_race' };

export interface Replanner {
  /** A final step failure (a StepFailed event). Idempotent: a repeat or a stale event changes nothing. */
  onStepFailed(ref: StepFailedRef): Promise<ReplanOutcome>;
  /**
   * The plan's budget ran out under `onExhausted: "replan"` (a BudgetExhausted event): a cheaper revision, asked for
   * at most once per run; a decline (no cheaper plan, an invalid one, the replan limit) ends the run
   * `budget_exhausted`. Idempotent: a repeat, or the exhaustion of a later revision, changes nothing.
   */
  onBudgetExhausted(ref: { readonly runId: string }): Promise<ReplanOutcome>;
  /**
   * Whether a person's replan of the run may go ahead now (the API asks before it hands the replan to a worker):
   * ConflictError (409) for a cancelled run, at the replan limit, or for a run without a plan.
   */
  checkReplan(runId: string): Promise<void>;
  /**
   * A person's replan. Returns the revision made, none when a concurrent replan made it first, or the approval the
   * revision waits for (it adds a mutating target). ConflictError (409) as checkReplan; PlannerError (422) when the
   * planner finds no revision (E_NO_CHANGE: one that would change nothing).
   */
  replanRun(request: {
    readonly runId: string;
    readonly reason: string;
    readonly objective?: string;
  }): Promise<{ runId: string; revision?: number; approvalId?: string }>;
  /**
   * A person's decision on a revision approval: approve makes the held revision current (ConflictError
   * E_REVISION_STALE when the run moved on meanwhile: the approval is closed, nothing changes); reject keeps the
   * previous revision (a failure the revision answered then stands).
   */
  decideRevision(decision: RevisionDecision): Promise<{ revision?: number }>;
  /**
   * A revision approval expired (its ApprovalDecided `expired`): its revision is rejected, as its wait's expiry does
   * (either may come first), and the run's failures that waited with it are answered. Idempotent.
   */
  onRevisionExpired(ref: { readonly runId: string; readonly approvalId: string }): Promise<void>;
}
