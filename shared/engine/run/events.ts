/**
 * What the decider decided: the run's events, in the order they happened. They are the only way a run's facts change
 * (evolve.ts), the run's log keeps them, and what the outside is told (the published events, effects.ts) and what
 * the shell does (start or stop an execution, answer a token) are read off them.
 */
import type { Plan, StepError } from '../../plan/schema.ts';
import type { ApprovalRecord, HeldRevision } from '../../ports/records/approvals.ts';
import type { ReplanRecord, TerminalRecord } from '../../ports/records/runs.ts';
import type { TraceEntry } from '../../ports/records/steps.ts';
import type { DeferredStart } from './commands.ts';

interface At {
  readonly at: string;
}

interface StepRef {
  readonly stepId: string;
  readonly generation: number;
}

/** A queued run was admitted: it is planning, and its run machine starts. */
export interface RunAdmitted extends At {
  readonly type: 'RunAdmitted';
}

/** Revision 1 is the run's plan: every executable step gets its first generation; the run is running. */
export interface RunStarted extends At {
  readonly type: 'RunStarted';
  readonly plan: Plan;
}

/** The run machine's waiting task token (the newest wins). */
export interface WaiterSet extends At {
  readonly type: 'WaiterSet';
  readonly token: string;
}

/** The decider hands the step's generation to an execution of the step machine, named `execution`. */
export interface StepStarted extends At, StepRef {
  readonly type: 'StepStarted';
  readonly execution: string;
}

export interface StepSkipped extends At, StepRef {
  readonly type: 'StepSkipped';
  readonly reason: string;
}

export interface StepSucceeded extends At, StepRef {
  readonly type: 'StepSucceeded';
  readonly attempts: number;
  readonly confidence: number | null;
  readonly trace: readonly TraceEntry[];
}

/** An attempt failed and the next one follows after `delaySeconds`. */
export interface StepRetrying extends At, StepRef {
  readonly type: 'StepRetrying';
  /** The attempt that failed. */
  readonly attempt: number;
  readonly delaySeconds: number;
  readonly error: StepError;
  readonly trace: readonly TraceEntry[];
}

/** The step's generation failed for good (`attempts` 0: before any attempt). */
export interface StepFailed extends At, StepRef {
  readonly type: 'StepFailed';
  readonly attempts: number;
  readonly error: StepError;
  readonly trace: readonly TraceEntry[];
}

/** An upstream failure keeps the step from ever running. */
export interface StepBlocked extends At, StepRef {
  readonly type: 'StepBlocked';
  readonly error: StepError;
  readonly blockedBy: readonly string[];
  readonly blockedByCount: number;
}

/** The step's generation is closed unfinished: its run ended, was cancelled, or its segment is being undone. */
export interface StepClosed extends At, StepRef {
  readonly type: 'StepClosed';
  readonly error: StepError;
}

/** A revision dropped the step: it is superseded (its record stays, out of the plan). */
export interface StepSuperseded extends At, StepRef {
  readonly type: 'StepSuperseded';
  readonly error: StepError;
}

/** What an execution did after its step had closed: recorded on the step, which stays as it is. */
export interface StepEvidence extends At, StepRef {
  readonly type: 'StepEvidence';
  readonly attempts: number;
  readonly trace: readonly TraceEntry[];
}

/** The step waits for a person's decision on `approvalId`. */
export interface StepAwaiting extends At, StepRef {
  readonly type: 'StepAwaiting';
  readonly approvalId: string;
  readonly attempts: number;
}

/**
 * The step starts its next generation (an invalidation, a revision): `pending`, or `ready` when nothing it waits for
 * is left. The ended generation goes to the step's history.
 */
export interface StepMoved extends At, StepRef {
  readonly type: 'StepMoved';
  /** The new generation's trace entries (a revision says why it runs again). */
  readonly trace: readonly TraceEntry[];
}

/** A revision adds the step: its first generation. */
export interface StepAdded extends At {
  readonly type: 'StepAdded';
  readonly stepId: string;
  readonly trace: readonly TraceEntry[];
}

export interface ApprovalRequested extends At {
  readonly type: 'ApprovalRequested';
  readonly approval: ApprovalRecord;
}

/** A retried wait holds the same approval with a new token: the person is asked once. */
export interface ApprovalTokenMoved extends At {
  readonly type: 'ApprovalTokenMoved';
  readonly approvalId: string;
  readonly token: string;
}

/**
 * A wait's task token is answered at once instead of being held: with the decision already recorded on `approvalId`
 * (a retried wait, or a repeat of the decision by the person who made it), or released with cairn's rejection
 * because its step no longer waits for a decision (`reason`).
 */
export interface WaitAnswered extends At, StepRef {
  readonly type: 'WaitAnswered';
  readonly token: string;
  readonly answer:
    | { readonly kind: 'decision'; readonly approvalId: string }
    | { readonly kind: 'released'; readonly reason: string };
}

/**
 * A decision that was taken but never reached its step (the wait timed out before its token was answered) goes to a
 * new execution of the step, `execution`, which judges it as the waiting one would have: the step is now its.
 */
export interface DecisionRedelivered extends At, StepRef {
  readonly type: 'DecisionRedelivered';
  readonly approvalId: string;
  /** The attempt the decision is about (the gate's, or the reviewed one). */
  readonly attempt: number;
  readonly execution: string;
}

export interface ApprovalDecided extends At {
  readonly type: 'ApprovalDecided';
  readonly approvalId: string;
  readonly status: 'approved' | 'rejected' | 'edited';
  readonly by: string;
  readonly comment?: string | undefined;
  readonly output?: unknown;
  /** Published (absent: yes); a decision on a finished run's revision says nothing until the run reopens. */
  readonly announced?: boolean | undefined;
}

/**
 * The approval no longer waits for anyone: expired at its deadline, or closed because its step moved on, was
 * superseded or cancelled. `comment` says which (the API answers a late decision by it); `announced`: published.
 */
export interface ApprovalClosed extends At {
  readonly type: 'ApprovalClosed';
  readonly approvalId: string;
  readonly comment: string;
  readonly announced: boolean;
}

export interface UsageCounted extends At, StepRef {
  readonly type: 'UsageCounted';
  readonly attempt: number;
  readonly tokens: number;
  readonly costUsd: number;
}

/** A budget's soft threshold was crossed on one dimension (once per budget and dimension). */
export interface BudgetWarned extends At {
  readonly type: 'BudgetWarned';
  readonly stepId?: string | undefined;
  readonly dimension: 'tokens' | 'costUsd';
  readonly limit: number;
  readonly spent: number;
  readonly warnAt: number;
}

/** The plan's budget ran out with nothing in flight (once per revision). */
export interface BudgetExhausted extends At {
  readonly type: 'BudgetExhausted';
  readonly revision: number;
  readonly onExhausted: 'fail' | 'pause' | 'replan';
  readonly exhausted: readonly { dimension: 'tokens' | 'costUsd' | 'seconds'; limit: number; spent: number }[];
}

/** A cancellation with compensation has begun: the run's segments are undone before it ends cancelled. */
export interface CancelBegun extends At {
  readonly type: 'CancelBegun';
  readonly by: string | null;
}

export interface CompensationStarted extends At, StepRef {
  readonly type: 'CompensationStarted';
  readonly target: string;
  readonly round: number;
  readonly execution: string;
  readonly by?: string | null | undefined;
}

/** A compensation's attempt failed and the next one follows after `delaySeconds` (evidence: nothing is decided). */
export interface CompensationRetrying extends At, StepRef {
  readonly type: 'CompensationRetrying';
  readonly attempt: number;
  readonly delaySeconds: number;
  readonly error: StepError;
  readonly trace: readonly TraceEntry[];
}

export interface CompensationEnded extends At, StepRef {
  readonly type: 'CompensationEnded';
  readonly state: 'compensated' | 'compensation_failed';
  readonly error?: StepError | undefined;
  /** The attempts its round made, and what the last one was called with and answered (evidence for a person). */
  readonly attempts?: number | undefined;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly resolution?: { readonly by: string | null; readonly note: string } | undefined;
  readonly trace: readonly TraceEntry[];
}

/** The run ended, or paused for a person (`terminal.state` says which). */
export interface RunFinished extends At {
  readonly type: 'RunFinished';
  readonly terminal: TerminalRecord;
  /** A cancel that ended the run at once: who asked (null: nobody known). A cancel with compensation has CancelBegun. */
  readonly requestedBy?: string | null | undefined;
}

/**
 * A person raised the run's limits (only those named, to the values named): the plan's budget stands at the larger
 * of each revision's and these, the replan limit at `maxReplans`. What they were is kept with them.
 */
export interface BudgetRaised extends At {
  readonly type: 'BudgetRaised';
  readonly limits: {
    readonly maxTokens?: number | undefined;
    readonly maxCostUsd?: number | undefined;
    readonly maxSeconds?: number | undefined;
    readonly maxReplans?: number | undefined;
  };
  readonly previous: BudgetRaised['limits'];
  readonly requestedBy: string;
}

/** A finished (or paused) run runs again: a new opening, waited for by a new run execution. */
export interface RunReopened extends At {
  readonly type: 'RunReopened';
  readonly opening: number;
  readonly reason: string;
}

/** A final failure waits for the replanner's answer (its watch gives up at `until`). */
export interface ReplanAsked extends At {
  readonly type: 'ReplanAsked';
  readonly failure: string;
  readonly until: string;
}

export interface ReplanDeclined extends At {
  readonly type: 'ReplanDeclined';
  readonly failure: string;
  readonly stepId: string;
  readonly code: string;
  readonly message: string;
}

/**
 * A revision waits for a person (it adds a mutating target) until `approval.deadline`: the shell keeps a timer for it
 * (RevisionWaitExpired). `announced`: published as ApprovalRequested (not while the run is finished).
 */
export interface RevisionHeld extends At {
  readonly type: 'RevisionHeld';
  readonly approval: ApprovalRecord;
  readonly revision: HeldRevision;
  readonly announced: boolean;
}

/** Revision `plan.revision` is current. */
export interface PlanRevised extends At {
  readonly type: 'PlanRevised';
  readonly plan: Plan;
  readonly reason: string;
  readonly record: ReplanRecord;
  readonly fingerprint?: string | undefined;
  readonly objective?: string | undefined;
  /** A person's replan: who asked for it. */
  readonly requestedBy?: string | undefined;
}

/** An invalidation was applied under `key` (a repeat of the key answers this). */
export interface InvalidationApplied extends At {
  readonly type: 'InvalidationApplied';
  readonly key: string;
  readonly reason: string;
  readonly stepIds: readonly string[];
  readonly reopened: boolean;
  /** Who asked: a person's subject, `webhook:<source>` for a resource change (absent: not known). */
  readonly requestedBy?: string | undefined;
  /** The first step it named. */
  readonly root?: string | undefined;
}

/**
 * Executions the shell could not start (the platform's throttle, its pacer) wait until `until`, when a timer sends
 * RetryStarts: a throttle never fails a step. `retry` counts the deferrals of these starts (the backoff's exponent).
 */
export interface StartsDeferred extends At {
  readonly type: 'StartsDeferred';
  readonly starts: readonly DeferredStart[];
  readonly retry: number;
  readonly until: string;
}

/** The deferred starts still wanted (their step still held by the execution) are made again. */
export interface StartsRetried extends At {
  readonly type: 'StartsRetried';
  readonly starts: readonly DeferredStart[];
  readonly retry: number;
}

export type RunEvent =
  | RunAdmitted
  | RunStarted
  | WaiterSet
  | StepStarted
  | StepSkipped
  | StepSucceeded
  | StepRetrying
  | StepFailed
  | StepBlocked
  | StepClosed
  | StepSuperseded
  | StepEvidence
  | StepAwaiting
  | StepMoved
  | StepAdded
  | ApprovalRequested
  | ApprovalTokenMoved
  | WaitAnswered
  | DecisionRedelivered
  | ApprovalDecided
  | ApprovalClosed
  | UsageCounted
  | BudgetWarned
  | BudgetExhausted
  | BudgetRaised
  | CancelBegun
  | CompensationStarted
  | CompensationRetrying
  | CompensationEnded
  | RunFinished
  | RunReopened
  | ReplanAsked
  | ReplanDeclined
  | RevisionHeld
  | PlanRevised
  | InvalidationApplied
  | StartsDeferred
  | StartsRetried;

export type RunEventType = RunEvent['type'];
