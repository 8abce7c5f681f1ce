/**
 * What the store keeps of a run (see ../store.ts): the run record with its replans and terminal state, the
 * Idempotency-Key claim of `POST /runs`, and the run's audit log entries.
 */
import type { Plan, RunStatus, StepStatus } from '../../plan/schema.ts';
import type { PriorReplan } from '../plan-model.ts';

export interface TerminalRecord {
  readonly state: 'complete' | 'failed' | 'paused' | 'cancelled';
  readonly reason: string;
  /** Root-cause step ids, counts, validation errors: whatever proves the state. */
  readonly evidence: Readonly<Record<string, unknown>>;
  readonly at: string;
}

export interface RunRecord {
  readonly runId: string;
  readonly status: RunStatus;
  readonly objective: string;
  readonly mode?: 'DIRECT' | 'DECOMPOSE' | 'SUBMITTED';
  readonly directTarget?: string;
  /** A plan submitted by the client, stored until the run state machine validates and persists it as revision 1. */
  readonly submittedPlan?: Plan;
  /** The plan the planner produced, waiting for validation. */
  readonly candidatePlan?: unknown;
  /**
   * Proof that the plan above already passed validation, and against which catalog and limits (shared/plan/stamp.ts):
   * ValidatePlan and StartRun do not validate it again when it matches theirs.
   */
  readonly planStamp?: string;
  readonly revision: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly idempotencyKey?: string;
  /**
   * The tenant of who started it (absent: the default tenant, as on runs from before tenants): only callers of this
   * tenant see the run, its approvals and events; its listing entries and watched resources are the tenant's.
   */
  readonly tenant?: string;
  /**
   * Who started the run (a JWT `sub`, a tokens file's subject, or `local-token`); absent on runs started before it
   * was kept, and on runs no API request started. Its approvals are not theirs to decide (shared/api/approval-rules.ts).
   */
  readonly startedBy?: string;
  /** Task token of the run state machine's wait-for-completion task. */
  readonly waiterToken?: string;
  readonly terminal?: TerminalRecord;
  readonly replans: number;
  /** No-progress fingerprints of the replans made so far (a repeat of one pauses the run instead of replanning). */
  readonly replanFingerprints?: readonly string[];
  /** `<stepId>#<generation>` of final failures the replanner already answered (a duplicate StepFailed is a no-op). */
  readonly handledFailures?: readonly string[];
  /** How often a finished run was reopened (invalidation, manual replan); names its next run execution. */
  readonly reopened?: number;
  /** Terminal records of earlier endings of a reopened run, oldest first. */
  readonly previousTerminals?: readonly TerminalRecord[];
  /**
   * The run's steps counted by status as it ended (absent while it runs): what `GET /runs` shows of an ended run
   * without reading its head. A reopening drops it.
   */
  readonly endCounts?: Readonly<Partial<Record<StepStatus, number>>>;
  /** The revisions the replanner made, oldest first (what later replans of the run are told they tried). */
  readonly replanLog?: readonly ReplanRecord[];
  /**
   * Final failures the replanner could not replan around (no alternative, an invalid or rejected revision), one JSON
   * `ReplanDecline` per member: they stand, and the run's terminal evidence names the planner's reason.
   */
  readonly replanDeclines?: readonly string[];
  /** What the run's attempts spent (the decider's UsageCounted: each attempt counted once); absent = nothing yet. */
  readonly usageTokens?: number;
  readonly usageCostUsd?: number;
  /**
   * The run is being cancelled with compensation (`POST /runs/{id}/cancel {"compensate": true}`): its segments'
   * finished mutating steps are undone before it ends cancelled.
   */
  readonly cancelCompensation?: boolean;
  /**
   * Who first asked for the cancellation (a JWT `sub`, or `local-token`), written with its mark: whoever ends the run
   * later (the last compensation's end, a repeat, a claim the mark refused) names them in the terminal evidence.
   */
  readonly cancelRequestedBy?: string;
  /**
   * A cancellation has begun (marked before it closes the open steps, plain or with compensation): no step of the run
   * is claimed any more, so a generation started after the cancel listed the steps (an invalidation, a late release)
   * runs no attempt and announces nothing; the cancel closes it after its end write. A reopening drops the mark.
   */
  readonly cancelling?: boolean;
  /** Budget thresholds announced (`run#<dimension>`, `<stepId>#<dimension>`): each once. */
  readonly budgetWarned?: readonly string[];
  /** Revisions whose budget's exhaustion was announced (once each). */
  readonly budgetExhaustedFor?: readonly number[];
  /**
   * Limits of the plan's budget a person raised (POST /runs/{id}/budget): each stands over every revision's own
   * (engine/budget.ts effectiveBudget).
   */
  readonly raisedBudget?: RaisedLimits;
  /** The replan limit a person raised the run's to (absent: the deployment's). */
  readonly maxReplans?: number;
  /** Who changed the run after it started, and how: the last RUN_ACTIONS_KEPT, oldest first. */
  readonly actions?: readonly RunAction[];
  /**
   * The keys of the run's last invalidations (a request's Idempotency-Key, a resource change's event id), newest last:
   * a repeat of one changes nothing.
   */
  readonly invalidationKeys?: readonly string[];
  /**
   * When revision 1 was made current (`RunStarted`): what a step nothing has changed since is implied from
   * (shared/engine/run/planned.ts), as such a step has no record of its own.
   */
  readonly startedAt?: string;
  /**
   * How many partitions the run's step items are spread over, chosen when it started from its plan's size
   * (shared/engine/run/step-partitions.ts) and never changed. Absent: one, the run's own (a run of up to 256 steps,
   * or one started before step partitions).
   */
  readonly stepShards?: number;
}

/** A person's raised limits of a run's budget (whole tokens, dollars, seconds). */
export type RaisedLimits = Readonly<Partial<Record<'maxTokens' | 'maxCostUsd' | 'maxSeconds', number>>>;

/** What a person (or a webhook's change) did to a run: cancel, replan, invalidate, compensate, raise its budget. */
export interface RunAction {
  readonly type: 'cancel' | 'replan' | 'invalidate' | 'compensation' | 'budget';
  /** The caller's subject (`local-token` for the one static token), `webhook:<source>`, or null when unknown. */
  readonly requestedBy: string | null;
  readonly at: string;
  /** The step it was about (an invalidation's first root, a compensation's step). */
  readonly stepId?: string;
  /** One line: what was done. */
  readonly detail?: string;
}

/**
 * One revision the replanner made: the PriorReplan record (the failure it answered and what it changed), the
 * failure's key `<stepId>#<generation>` (absent for a manual replan without one) and the revision's reason.
 */
export type ReplanRecord = PriorReplan & {
  readonly failure?: string;
  readonly reason: string;
  /** A person's replan: the request it answered (its planning job), when it named one. */
  readonly request?: string;
  /** A person's replan: who asked for it. */
  readonly requestedBy?: string;
  readonly at: string;
  /** What the revision does to the step records (absent on records written before it was kept). */
  readonly application?: RevisionApplication;
};

/** A record that starts its next generation, from the generation it had when the revision was made. */
export interface RestartedRecord {
  readonly stepId: string;
  readonly from: number;
}

/**
 * What revision n+1 does to the step records, recorded with the write that makes the revision current so that
 * whoever comes next (the replanner's retry) can finish it: see engine/replan/application.ts.
 */
export interface RevisionApplication {
  /** Records the revision drops: they become `superseded` (unless they already ended with an output). */
  readonly removed: readonly string[];
  /** Existing records that start a new generation (changed steps, and dropped steps the revision brings back). */
  readonly restarted: readonly RestartedRecord[];
  /** Steps new to the run: they get a first record. */
  readonly added: readonly string[];
}

/** A failure the replanner answered without a revision (`replanDeclines`). */
export interface ReplanDecline {
  readonly failure: string;
  readonly stepId: string;
  readonly code: string;
  readonly message: string;
}

/** Who holds an Idempotency-Key of `POST /runs`: its run, and a hash of the request that claimed it. */
export interface RunKeyClaim {
  readonly runId: string;
  /** Absent on a claim stored before request hashes were recorded: it cannot be compared, so it matches any. */
  readonly requestHash?: string;
}

export interface RunEventRecord {
  readonly runId: string;
  /**
   * The event's place in the run's audit log: `v<version>~<index>`, the batch of the run's decisions that announced
   * it and its place in the batch, so later decisions sort later (`<at>~<announcement id>~<index>` on events of
   * announcements that name no version, and on logs written before). A listing's `after` cursor.
   */
  readonly seq: string;
  readonly type: string;
  readonly at: string;
  readonly stepId?: string;
  readonly generation?: number;
  readonly detail: Readonly<Record<string, unknown>>;
}
