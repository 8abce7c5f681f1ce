/** What the store keeps of approvals (see ../store.ts): a step's approval or review, and a held plan revision. */
import type { Plan } from '../../plan/schema.ts';
import type { ReplanChange, ReplanScope } from '../plan-model.ts';

/**
 * A plan revision held for a person's approval (it adds a mutating target): made current on approval, if the run
 * is still at `baseRevision` then.
 */
export interface HeldRevision {
  readonly baseRevision: number;
  /** Revision baseRevision + 1 as proposed (lifecycle fields as they were when it was proposed). */
  readonly plan: Plan;
  readonly scope: ReplanScope;
  readonly change: ReplanChange;
  readonly replaces: Readonly<Record<string, string>>;
  readonly reason: string;
  /** The failure the revision answers (an automatic replan, or a person's replan of a failed step). */
  readonly failure?: { readonly stepId: string; readonly generation: number };
  readonly failedTarget?: string;
  readonly failedCode?: string;
  /** A person's new objective. */
  readonly objective?: string;
  /**
   * A person's replan: the request it answers (its planning job). A repeat of that request's proposal is answered as
   * the first one was; another request's proposal, however alike, is another proposal.
   */
  readonly request?: string;
  /** A person's replan: who asked for it (the caller's subject). */
  readonly requestedBy?: string;
  /** A budget replan's revision (`budget.onExhausted: "replan"`): a rejection ends the run `budget_exhausted`. */
  readonly trigger?: 'budget';
  /** The mutating targets it adds (what the person approves). */
  readonly targets?: readonly string[];
}

export interface ApprovalRecord {
  readonly approvalId: string;
  readonly runId: string;
  /** Its run's tenant (absent: the default tenant): whose inbox lists it, and who may read it. */
  readonly tenant?: string;
  /** A revision approval has `~revision~<n>` (no plan step id holds `~`) and generation n, the held revision. */
  readonly stepId: string;
  readonly generation: number;
  readonly kind: 'approval' | 'review' | 'revision';
  readonly status: 'pending' | 'approved' | 'rejected' | 'edited' | 'expired';
  readonly question: string;
  readonly input?: unknown;
  readonly upstreamOutputs?: Readonly<Record<string, unknown>>;
  /** For a review: the held result that waits for a person. */
  readonly heldOutput?: unknown;
  readonly heldConfidence?: number | null;
  /** For a revision approval: the revision it holds. */
  readonly heldRevision?: HeldRevision;
  /** The waiting step execution's task token; `-` for a revision approval (nothing waits on a token). */
  readonly taskToken: string;
  readonly createdAt: string;
  readonly deadline: string;
  readonly decidedAt?: string;
  readonly decidedBy?: string;
  readonly comment?: string;
  readonly output?: unknown;
}
