/**
 * What the replanner is to its callers (the StepFailed subscriber, the API's replan route and revision decisions):
 * its dependencies, the failure it is handed, and what it answers. The replanner itself is replanner.ts.
 */
import type { PlanModel } from '../ports/plan-model.ts';
import type { CoordinatorDeps } from './coordinator-types.ts';

export interface ReplannerDeps extends CoordinatorDeps {
  /** The planning model: the HTN method library embedded, Bedrock when a model id is configured. */
  readonly model: PlanModel;
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
   * A person raised the run's replan limit (a BudgetRaised event naming `maxReplans`): every failure the decider asked
   * about again and nobody answered yet is answered as a StepFailed would be. The outcome of the last one (ignored
   * when there is none). Idempotent as onStepFailed is.
   */
  onLimitRaised(ref: { readonly runId: string }): Promise<ReplanOutcome>;
  /**
   * A person's replan. Returns the revision made, none when a concurrent replan made it first, or the approval the
   * revision waits for (it adds a mutating target). ConflictError (409) as checkReplan; PlannerError (422) when the
   * planner finds no revision (E_NO_CHANGE: one that would change nothing).
   */
  replanRun(request: {
    readonly runId: string;
    readonly reason: string;
    readonly objective?: string;
    /** The request's own id (its planning job): a repeat of it is answered as the first one was. */
    readonly request?: string;
    /** Who asked (the caller's subject): the revision records it. */
    readonly requestedBy?: string;
  }): Promise<{ runId: string; revision?: number; approvalId?: string }>;
}
