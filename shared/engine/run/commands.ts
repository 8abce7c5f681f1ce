/**
 * Everything that may change a run's facts, as the run's mailbox delivers it: one command at a time, each stamped
 * by the shell with the time it was taken (`at`) so that deciding stays pure. Who sends each:
 * - admission (shared/services/admission.ts): AdmitRun;
 * - the run machine: StartRun, RejectPlan, FailRun, AwaitRun, FinalizeRun;
 * - a step execution: AttemptEnded (its attempt's outcome, or that its execution failed for good), AwaitDecision
 *   (a gate or review waits on a task token), DecisionTimedOut, CompensationEnded;
 * - the API: DecideApproval, CancelRun, Invalidate (also the invalidator, for a resource change), ActOnCompensation,
 *   RaiseBudget;
 * - the replanner: ProposeRevision, DeclineReplan; a timer: ReplanWatchExpired, RevisionWaitExpired, RetryStarts;
 * - the shell: StartsThrottled (executions it could not start for the platform's throttle or its own pacing).
 */
import type { Plan, StepError } from '../../plan/schema.ts';
import type { ModelUsage } from '../../ports/capabilities.ts';
import type { HeldRevision } from '../../ports/records/approvals.ts';
import type { TraceEntry } from '../../ports/records/steps.ts';

/** Who asked: a JWT subject, `local-token`, or the system (`cairn`). */
export type Principal = string;

interface Base {
  /** When the shell took the command (ISO instant): the decider's only clock. */
  readonly at: string;
}

/** A queued run was given one of its tenant's running slots: it starts (its run machine plans it). */
export interface AdmitRun extends Base {
  readonly kind: 'AdmitRun';
}

export interface StartRun extends Base {
  readonly kind: 'StartRun';
  /** Revision 1, validated. */
  readonly plan: Plan;
}

/** The run's plan could not be made or failed validation: the run fails before it starts. */
export interface RejectPlan extends Base {
  readonly kind: 'RejectPlan';
  readonly reason: 'invalid_plan' | 'planning_failed';
  readonly evidence: Readonly<Record<string, unknown>>;
  /** The run execution that sends it (a reopened run's newer execution outlives the first one's words). */
  readonly opening: number;
}

export interface AwaitRun extends Base {
  readonly kind: 'AwaitRun';
  readonly token: string;
  readonly opening: number;
}

/** The run machine's wait ended: the deadline passed (`timedOut`), or the wait failed (`error`), or it was answered. */
export interface FinalizeRun extends Base {
  readonly kind: 'FinalizeRun';
  readonly opening: number;
  readonly timedOut: boolean;
  readonly error?: string | undefined;
}

/** Identifies one step execution's work on one generation of a step. */
export interface StepWork {
  readonly stepId: string;
  readonly generation: number;
  /** The execution's name (it was started by the decider under this name). */
  readonly execution: string;
}

export type AttemptOutcome =
  /** `when` was false: the step did nothing. */
  | { readonly kind: 'skipped'; readonly reason: string }
  /** Its `when` or input could not be evaluated, or the input breaks the contract: it fails before any attempt. */
  | { readonly kind: 'rejected'; readonly error: StepError }
  /** A verified result (the output is on the attempt record and the step record, written by the execution). */
  | { readonly kind: 'succeeded'; readonly confidence: number | null }
  /** A failed attempt; `retryable` on the error says whether another attempt may follow. */
  | { readonly kind: 'failed'; readonly error: StepError }
  /** The execution did not make the attempt: the run stopped letting attempts start (its side-effect gate said no). */
  | { readonly kind: 'notStarted'; readonly note: string };

export interface AttemptEnded extends Base, StepWork {
  readonly kind: 'AttemptEnded';
  /** 1-based; 0 for what a step decides before any attempt (skipped, rejected). */
  readonly attempt: number;
  readonly outcome: AttemptOutcome;
  /** What the attempt spent, priced (the decider counts each attempt once). */
  readonly usage?: { readonly tokens: number; readonly costUsd: number; readonly model?: ModelUsage } | undefined;
  /** The execution's one-line account of the attempt (what it called, what verification found). */
  readonly note: string;
  /** A person's decision the attempt was judged by (a gate, a review), and who gave it. */
  readonly judged?: { readonly decision: 'approve' | 'reject' | 'edit'; readonly by?: string | undefined } | undefined;
}

/** A step execution failed for good outside its own attempt (the platform outlasted its retries, a gate's wait failed). */
export interface ExecutionFailed extends Base {
  readonly kind: 'ExecutionFailed';
  readonly stepId: string;
  readonly generation: number;
  /** The attempt it was in, when known. */
  readonly attempt: number | null;
  readonly error: StepError;
}

/** What a person is shown with an approval (computed by the execution; kept on the approval record). */
export interface ApprovalPresentation {
  readonly question: string;
  readonly input?: unknown;
  readonly upstreamOutputs?: Readonly<Record<string, unknown>>;
  readonly heldOutput?: unknown;
  readonly heldConfidence?: number | null;
}

/** A gate (or a review of a low-confidence result) waits for a person on `token`. */
export interface AwaitDecision extends Base, StepWork {
  readonly kind: 'AwaitDecision';
  readonly approvalKind: 'approval' | 'review';
  readonly attempt: number;
  readonly token: string;
  /** How long the wait lasts (the machine's timeout): the approval's deadline is `at` plus this. */
  readonly timeoutSeconds: number;
  readonly presentation: ApprovalPresentation;
}

/** The machine's wait for a decision timed out. */
export interface DecisionTimedOut extends Base, StepWork {
  readonly kind: 'DecisionTimedOut';
  readonly approvalKind: 'approval' | 'review';
}

export interface DecideApproval extends Base {
  readonly kind: 'DecideApproval';
  readonly approvalId: string;
  readonly decision: 'approve' | 'reject' | 'edit';
  readonly output?: unknown;
  readonly comment?: string | undefined;
  readonly by: Principal;
}

export interface CancelRun extends Base {
  readonly kind: 'CancelRun';
  readonly compensate: boolean;
  readonly by: Principal | null;
}

export interface Invalidate extends Base {
  readonly kind: 'Invalidate';
  /** Step or group ids of the current plan. */
  readonly roots: readonly string[];
  readonly reason: string;
  /** Names this invalidation: a repeat with the same key answers the first one's result. */
  readonly key: string;
  /** A resource change: only roots whose current generation ran before it are stale (absent: a request). */
  readonly resourceChange?: { readonly changedAt?: string | undefined } | undefined;
  readonly by?: Principal | undefined;
}

export interface CompensationEnded extends Base, StepWork {
  readonly kind: 'CompensationEnded';
  /** The person's retry round it belongs to (0: the first). */
  readonly round: number;
  /** The compensation's attempt the outcome is about (1-based); null when its execution failed not knowing which. */
  readonly attempt: number | null;
  /** What the attempt called the compensating capability with, and what it answered, when it got that far. */
  readonly input?: unknown;
  readonly output?: unknown;
  readonly outcome:
    | { readonly kind: 'compensated' }
    | { readonly kind: 'retry'; readonly error: StepError; readonly delaySeconds: number }
    | { readonly kind: 'failed'; readonly error: StepError };
  readonly trace?: readonly TraceEntry[] | undefined;
}

export interface ActOnCompensation extends Base {
  readonly kind: 'ActOnCompensation';
  readonly stepId: string;
  readonly action: { readonly kind: 'retry' } | { readonly kind: 'resolve'; readonly note: string };
  readonly by: Principal | null;
}

/**
 * A person gives a run held for its budget (`budget_exhausted`) or its replan limit (`max_replans`) more room: the
 * plan's limits they name and the replan limit, each larger than the run's now. The run resumes where it paused.
 */
export interface RaiseBudget extends Base {
  readonly kind: 'RaiseBudget';
  readonly limits: {
    readonly maxTokens?: number | undefined;
    readonly maxCostUsd?: number | undefined;
    readonly maxSeconds?: number | undefined;
    readonly maxReplans?: number | undefined;
  };
  readonly by: Principal;
}

/** What a revision answers: a failure the decider asked about, a person's replan, or the run's spent budget. */
export type RevisionTrigger = 'failure' | 'request' | 'budget';

/**
 * The replanner's answer (to a failure, a person's replan, or a budget replan): revision `baseRevision + 1`. Its
 * replan record and no-progress fingerprint are the decider's to make, from the run as it is when the revision is
 * made current (a held one's only on approval).
 */
export interface ProposeRevision extends Base {
  readonly kind: 'ProposeRevision';
  readonly trigger: RevisionTrigger;
  /** `failure` names the failure for the `failure` trigger; `trigger: 'budget'` goes with the `budget` one. */
  readonly revision: HeldRevision;
  /** The targets it adds that mutate (the catalog's word when it was proposed): a person must approve it first. */
  readonly mutatingTargets: readonly string[];
  readonly by?: Principal | undefined;
}

/** The replanner will not answer a failure (or the budget's exhaustion): it stands. */
export interface DeclineReplan extends Base {
  readonly kind: 'DeclineReplan';
  /** `<stepId>#<generation>`, or `~budget`. */
  readonly failure: string;
  readonly code: string;
  readonly message: string;
}

/** Nobody answered a final failure in time. */
export interface ReplanWatchExpired extends Base {
  readonly kind: 'ReplanWatchExpired';
  readonly failure: string;
}

export interface RevisionWaitExpired extends Base {
  readonly kind: 'RevisionWaitExpired';
  readonly approvalId: string;
}

/**
 * An execution start the shell could not make (Step Functions' StartExecution throttled past the SDK's retries, or
 * the shell's pacer had no room for it): the effect as the decider derived it, named by its execution.
 */
export interface DeferredStart {
  readonly execution: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/** The shell could not start these executions now: the decider says when they are tried again (never: a failure). */
export interface StartsThrottled extends Base {
  readonly kind: 'StartsThrottled';
  readonly starts: readonly DeferredStart[];
  /** How often these starts were deferred before (0: their first throttle). */
  readonly retry: number;
  /** The shell's hint: seconds until its pacer expects room for them all (0: no idea). */
  readonly retryAfterSeconds: number;
}

/** A deferral's timer: the starts it held are due again. */
export interface RetryStarts extends Base {
  readonly kind: 'RetryStarts';
  readonly starts: readonly DeferredStart[];
  readonly retry: number;
}

export type RunCommand =
  | AdmitRun
  | StartRun
  | RejectPlan
  | AwaitRun
  | FinalizeRun
  | AttemptEnded
  | ExecutionFailed
  | AwaitDecision
  | DecisionTimedOut
  | DecideApproval
  | CancelRun
  | Invalidate
  | CompensationEnded
  | ActOnCompensation
  | RaiseBudget
  | ProposeRevision
  | DeclineReplan
  | ReplanWatchExpired
  | RevisionWaitExpired
  | StartsThrottled
  | RetryStarts;

export type RunCommandKind = RunCommand['kind'];

type WithoutAt<T> = T extends unknown ? Omit<T, 'at'> : never;

/** A command as its sender makes it: the shell stamps `at` when it takes it. */
export type RunCommandInput = WithoutAt<RunCommand>;
