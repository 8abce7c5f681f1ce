/**
 * The coordinator's dependencies, requests and answers: one request type per action of the run and step state
 * machines (see the execution design), plus `cancelRun` for the API. Only ids and small decisions travel through
 * Step Functions; everything else is read from and written to the store.
 */
import type { StepBrief } from '../engine/run/step-brief.ts';
import type { TraceRetention } from '../engine/trace.ts';
import type { HumanDecision } from '../engine/verify.ts';
import type { Catalog } from '../plan/catalog.ts';
import type { StepError } from '../plan/schema.ts';
import type { Executions } from '../ports/executions.ts';
import type { ExpressionEvaluator } from '../ports/expressions.ts';
import type { Mailbox } from '../ports/mailbox.ts';
import type { MetricsSink } from '../ports/metrics.ts';
import type { Store } from '../ports/store.ts';

export interface CoordinatorConfig {
  /** How long a run may take from StartRun; the run machine's wait times out after this. */
  readonly runDeadlineSeconds: number;
  readonly retryBaseSeconds: number;
  readonly retryCapSeconds: number;
  readonly maxSteps: number;
  readonly maxDepth: number;
  /** 'last': succeeded steps keep only their last trace entry; failed steps always keep the full trace. */
  readonly traceRetention: TraceRetention;
  /**
   * Replans a run may make (CAIRN_MAX_REPLANS, default 3 where configured). While it is above 0 a final step failure
   * does not end the run: the replanner answers it (a revision, a pause, or the failure stands). Absent or 0: no
   * replanning, a failure decides the run as soon as everything has settled.
   */
  readonly maxReplans?: number;
  /** The deadline of an approval without a timeout of its own (CAIRN_APPROVAL_TIMEOUT_SECONDS); absent: the run's. */
  readonly approvalTimeoutSeconds?: number | undefined;
  /**
   * How long after a final failure its replan watch declines it unanswered (a timer of the run's decider,
   * engine/run/rules/replans.ts); absent: default.
   */
  readonly replanWatchSeconds?: number | undefined;
}

export interface CoordinatorDeps {
  readonly store: Store;
  readonly executions: Executions;
  readonly catalog: Catalog;
  readonly clock: () => Date;
  readonly newId: () => string;
  readonly config: CoordinatorConfig;
  /** Operational metrics (EMF when deployed); none when absent. */
  readonly metrics?: MetricsSink;
  /**
   * Where plan expressions run (the composition root passes the isolated worker pool); absent: in this thread under
   * the cooperative bounds only (tests).
   */
  readonly expressions?: ExpressionEvaluator;
  /** The runs' mailboxes: the one way to tell a run's decider anything. */
  readonly mailbox: Mailbox;
}

export type StepKindName = 'tool' | 'agent' | 'human';

/** An error as Step Functions reports it in a Catch (`$.error`), or anything else a caller passes along. */
export type WorkflowError = unknown;

export interface StepRef {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
}

/** The execution a state machine's word comes from (its name): a run's opening, a step's generation holder. */
interface FromExecution {
  readonly execution?: string | null | undefined;
}

export interface RejectPlanRequest extends FromExecution {
  readonly runId: string;
  readonly errors: readonly { readonly code: string; readonly path: string; readonly message: string }[];
}
export interface FailRunRequest extends FromExecution {
  readonly runId: string;
  readonly error?: WorkflowError;
}
export interface StartRunResult {
  readonly deadlineSeconds: number;
}
export interface AwaitRunRequest extends FromExecution {
  readonly runId: string;
  readonly taskToken: string;
}
export interface FinalizeRunRequest {
  readonly runId: string;
  /** Set (to the caught States.Timeout error) when the run's deadline passed; null or absent otherwise. */
  readonly timedOut?: WorkflowError | null;
  /** Set when the wait failed for another reason. */
  readonly error?: WorkflowError | null;
  /** The run execution's name: a finalize from an execution the run has outlived (it was reopened) changes nothing. */
  readonly execution?: string | null;
}

/** What the step needs of its plan, as its execution was started with it (none: the plan is read). */
export interface Briefed {
  readonly brief?: StepBrief | null | undefined;
}

export interface RecordFailureRequest extends StepRef, FromExecution, Briefed {
  /** The failed attempt; absent when the caller does not know it (RunStep's entry says, else the step's count). */
  readonly attempt?: number | undefined;
  /** What RunStep was entered with: null for its first entry, else the attempt it was to make (or judge). */
  readonly previous?: { readonly attempt: number } | null | undefined;
  readonly error: StepError;
}

/** What a person is asked for. */
export type ApprovalKind = 'approval' | 'review' | 'revision';
/** What a step machine's wait is for: a person's answer (`replan`: a wait no step machine makes any more, see below). */
export type WaitKind = ApprovalKind | 'replan';

export interface RequestApprovalRequest extends StepRef, FromExecution, Briefed {
  readonly kind: WaitKind;
  readonly taskToken: string;
}
export interface ApprovalRequested {
  /** Absent when the step no longer waits for a person (the token was answered with a rejection at once). */
  readonly approvalId?: string;
}

export interface ExpireApprovalRequest extends StepRef, FromExecution {
  readonly kind?: WaitKind | undefined;
}

/**
 * What the step machine does next (RunStep's answer, `$.next`): nothing (the step is finished, or someone else runs
 * it), wait out a retry's backoff and run the next attempt, or wait for a person's decision (a gate, a review).
 */
export type StepNext =
  | { readonly action: 'done'; readonly attempt: number }
  | { readonly action: 'retry'; readonly attempt: number; readonly delaySeconds: number }
  | {
      readonly action: 'await';
      readonly attempt: number;
      /**
       * `revision`: the wait of a revision approval's deadline; `replan`: none (the replan watch is a timer of the run's
       * decider, engine/run/rules/replans.ts).
       */
      readonly kind: WaitKind;
      /** Step Functions TimeoutSecondsPath: a positive whole number. */
      readonly timeoutSeconds: number;
    };

/** One RunStep call: the step machine's input, what RunStep answered last time (null at first), a decision. */
export interface RunStepRequest extends StepRef, Briefed {
  readonly executionId: string;
  readonly previous: StepNext | null;
  /** A person's answer to the wait `previous` asked for (only read after an `await`). */
  readonly decision?: HumanDecision | null | undefined;
}

export interface Coordinator {
  rejectPlan(request: RejectPlanRequest): Promise<void>;
  failRun(request: FailRunRequest): Promise<void>;
  startRun(request: { readonly runId: string }): Promise<StartRunResult>;
  awaitRun(request: AwaitRunRequest): Promise<void>;
  finalizeRun(request: FinalizeRunRequest): Promise<void>;
  recordFailure(request: RecordFailureRequest): Promise<StepNext>;
  requestApproval(request: RequestApprovalRequest): Promise<void>;
  expireApproval(request: ExpireApprovalRequest): Promise<void>;
}
