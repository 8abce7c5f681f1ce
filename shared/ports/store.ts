/**
 * The store port: everything cairn persists. One AWS adapter (DynamoDB, which the embedded stack runs against
 * dynalite through the same SDK client). Every write that a retry, a crash or a duplicate event can repeat is a
 * single-item conditional write; losing a condition is reported as a result (or a ConflictError), never silently.
 */
import type { OutboxEntry } from '../events/outbox.ts';
import type { Plan, RunStatus, StepError, StepStatus } from '../plan/schema.ts';
import type { ModelUsage, Spend } from './capabilities.ts';
import type { PlanJobOutcome, PlanJobRecord } from './plan-jobs.ts';
import type { PriorReplan, ReplanChange, ReplanScope } from './plan-model.ts';

export type StepKindName = 'tool' | 'agent' | 'human' | 'group';

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
  /** The revisions the replanner made, oldest first (what later replans of the run are told they tried). */
  readonly replanLog?: readonly ReplanRecord[];
  /**
   * Final failures the replanner could not replan around (no alternative, an invalid or rejected revision), one JSON
   * `ReplanDecline` per member: they stand, and the run's terminal evidence names the planner's reason.
   */
  readonly replanDeclines?: readonly string[];
  /** What the run's attempts spent (Store.addUsage: each attempt counted once); absent = nothing yet. */
  readonly usageTokens?: number;
  readonly usageCostUsd?: number;
  /**
   * The run is being cancelled with compensation (`POST /runs/{id}/cancel {"compensate": true}`): its segments'
   * finished mutating steps are undone before it ends cancelled.
   */
  readonly cancelCompensation?: boolean;
  /**
   * Who asked for that cancellation (a JWT `sub`, or `local-token`): the run ends later, from the last compensation's
   * end, and its terminal evidence names them as a plain cancellation's does.
   */
  readonly cancelRequestedBy?: string;
}

/**
 * One revision the replanner made: the PriorReplan record (the failure it answered and what it changed), the
 * failure's key `<stepId>#<generation>` (absent for a manual replan without one) and the revision's reason.
 */
export type ReplanRecord = PriorReplan & {
  readonly failure?: string;
  readonly reason: string;
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

/** Run record string sets that `Store.markRunOnce` adds to. */
export type RunSetAttribute = 'replanFingerprints' | 'handledFailures' | 'replanDeclines';

/**
 * The plan a run carries only until it starts (then revision 1 holds it): `updateRun` may remove these, so that
 * the run record every step action reads stays small.
 */
export type RunPlanField = 'submittedPlan' | 'candidatePlan' | 'planStamp';

/** Run fields `updateRun` may drop: the plan copies, and a finished run's terminal record and waiter when it reopens. */
export type RunRemovableField = RunPlanField | 'terminal' | 'waiterToken';

export interface TraceEntry {
  /** `[plan]`, `[exec]`, `[judge]`, `[fail]`. */
  readonly kind: 'plan' | 'exec' | 'judge' | 'fail';
  readonly at: string;
  readonly text: string;
}

export interface StepRecord {
  readonly runId: string;
  readonly stepId: string;
  readonly status: StepStatus;
  readonly generation: number;
  /** Effective upstream executable step ids (group dependencies expanded). */
  readonly upstream: readonly string[];
  /** Upstream steps not yet finished for this generation; the write that takes it to 0 starts the step. */
  readonly remaining: number;
  /** Upstream step ids already counted against `remaining` for this generation (exactly once per edge). */
  readonly released: readonly string[];
  readonly attempts: number;
  readonly output?: unknown;
  readonly error?: StepError | null;
  readonly confidence?: number | null;
  readonly trace: readonly TraceEntry[];
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly updatedAt: string;
  /** Execution that claimed this generation (only one claimant ever runs it). */
  readonly claimedBy?: string;
  /** Earlier generations' results, oldest first: superseded by a new generation, kept for audit. */
  readonly history?: readonly StepGenerationRecord[];
  /**
   * The key of the change that started this generation (`NextGeneration.key`): a repeat of that change after a
   * partial first try recognises its own write by it. Absent on a first generation and one started without a key.
   */
  readonly generationKey?: string;
  /** What the step's attempts spent, over all generations (Store.addUsage); absent = nothing yet. */
  readonly usageTokens?: number;
  readonly usageCostUsd?: number;
  /** Its compensation (saga), once one started: what was called with what, and how it ended. */
  readonly compensation?: CompensationRecord;
}

/** The evidence of a step's compensation. */
export interface CompensationRecord {
  readonly target: string;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly error?: StepError | null;
  readonly attempts: number;
  readonly idempotencyKey: string;
  readonly startedAt: string;
  readonly finishedAt?: string;
  /** How often a person asked for it to be tried again after it failed (names its execution: `~undo~<id>~r<n>`). */
  readonly round?: number;
  /** A person resolved it by hand instead (`compensated` without a call): who, and their note. */
  readonly resolution?: { readonly by: string | null; readonly note: string; readonly at: string };
  /** Who asked for the last retry. */
  readonly retriedBy?: string | null;
}

/** What one earlier generation of a step ended with (its attempts, keyed by generation, stay as they were). */
export interface StepGenerationRecord {
  readonly generation: number;
  readonly status: StepStatus;
  /** Left out when it was too large to keep on the step item (the generation's attempt records still hold it). */
  readonly output?: unknown;
  readonly error?: StepError | null;
  readonly confidence?: number | null;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  /** The execution that had claimed it, when it was still in flight as it ended (a repeat stops it by this). */
  readonly claimedBy?: string;
}

/** How a step's next generation starts (see `Store.startGeneration`). */
export interface NextGeneration {
  readonly status: 'pending' | 'ready';
  /** Effective upstream executable step ids of the new generation. */
  readonly upstream: readonly string[];
  /** Upstream steps still to finish; `released` holds the ones already counted. */
  readonly remaining: number;
  readonly released: readonly string[];
  /** Entries appended to the step's trace with the new generation (a revision's `[plan]` entry: why it runs again). */
  readonly appendTrace?: readonly TraceEntry[];
  /** Kept on the new generation as `generationKey`: the change that started it (an invalidation's key). */
  readonly key?: string;
  /**
   * Upstream steps that start their next generation with this one (the same invalidation or revision), each with
   * the generation it starts from: a release sent by that generation or an earlier one is stale (it finished before
   * it was invalidated, and its answer came late) and is not counted (see `Store.releaseDependency`).
   */
  readonly staleReleases?: Readonly<Record<string, number>>;
}

/** A step that watches an outside resource (`watches` in the plan): written with each plan revision. */
export interface WatchEntry {
  readonly stepId: string;
  readonly resourceKey: string;
}

export interface AttemptRecord {
  readonly runId: string;
  readonly stepId: string;
  readonly generation: number;
  readonly attempt: number;
  readonly target: string;
  readonly startedAt: string;
  readonly finishedAt?: string;
  readonly outcome: 'running' | 'succeeded' | 'failed';
  readonly input?: unknown;
  readonly output?: unknown;
  readonly confidence?: number | null;
  readonly error?: StepError | null;
  /** What ran: binding kind, function ARN / URL / model id, idempotency key, replayed or not. */
  readonly evidence: Readonly<Record<string, unknown>>;
  /**
   * Tokens the capability's model consumed in this attempt (model-backed bindings only; a failed attempt has one
   * when the model answered). Sum with shared/engine/usage.ts.
   */
  readonly usage?: ModelUsage;
  /** The plan revision the attempt ran under (audit: which plan asked for it). */
  readonly revision?: number;
  /** What verification made of it: pass, review (held for a person) or fail (a failed call is a fail). */
  readonly verdict?: 'pass' | 'review' | 'fail';
}

export interface RunEventRecord {
  readonly runId: string;
  /**
   * The event's place in the run's audit log: `<at>~<announcement id>~<index>`, ordered by the time the announcing
   * write was made (events of one write keep their order). A listing's `after` cursor.
   */
  readonly seq: string;
  readonly type: string;
  readonly at: string;
  readonly stepId?: string;
  readonly generation?: number;
  readonly detail: Readonly<Record<string, unknown>>;
}

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
  /** A budget replan's revision (`budget.onExhausted: "replan"`): a rejection ends the run `budget_exhausted`. */
  readonly trigger?: 'budget';
  /** The mutating targets it adds (what the person approves). */
  readonly targets?: readonly string[];
}

export interface ApprovalRecord {
  readonly approvalId: string;
  readonly runId: string;
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

/** Who holds an Idempotency-Key of `POST /runs`: its run, and a hash of the request that claimed it. */
export interface RunKeyClaim {
  readonly runId: string;
  /** Absent on a claim stored before request hashes were recorded: it cannot be compared, so it matches any. */
  readonly requestHash?: string;
}

export type IdempotencyRecord =
  | { readonly key: string; readonly status: 'in_progress'; readonly expiresAt: number }
  | { readonly key: string; readonly status: 'completed'; readonly result: unknown; readonly expiresAt: number };

/** Field updates a step transition may write. */
export interface StepPatch {
  readonly status?: StepStatus;
  readonly attempts?: number;
  readonly output?: unknown;
  readonly error?: StepError | null;
  readonly confidence?: number | null;
  readonly appendTrace?: readonly TraceEntry[];
  /** Replace the whole trace (retention: succeeded steps keep only their last entry). */
  readonly trace?: readonly TraceEntry[];
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly claimedBy?: string;
  readonly compensation?: CompensationRecord;
  /**
   * The record of the attempt this transition ends, written by the same write instead of a `putAttempt` of its own
   * (a first attempt's success: one write fewer per step). Only if the step carries no attempt record yet. From then
   * on `getAttempt`, `getStepWithRun` and `listAttempts` return it like any other; if a record of the same attempt
   * was also put apart (a duplicated invocation that recorded another outcome), the carried one is the one returned,
   * since it is the one the step's status was decided with. `startGeneration` keeps it as an attempt of the ended
   * generation. It is never updated (`updateAttempt` is for attempts recorded apart).
   */
  readonly attemptRecord?: AttemptRecord;
}

/** Names one attempt of one generation of a step. */
export interface AttemptRef {
  readonly generation: number;
  readonly attempt: number;
}

/** What a step action starts from, read in one round trip (see `Store.getStepWithRun`). */
export interface StepWithRun {
  readonly run?: RunRecord;
  readonly step?: StepRecord;
  /** Only when an attempt was asked for and exists. */
  readonly attempt?: AttemptRecord;
  /** Only when other steps were asked for: those of them that exist. */
  readonly others?: readonly StepRecord[];
}

/** Where a run sits in the listing of runs (newest first): a page continues before it. */
export interface RunPosition {
  readonly createdAt: string;
  readonly runId: string;
}

/** Where an approval sits in the listing of approvals (oldest first): a page continues after it. */
export interface ApprovalPosition {
  readonly createdAt: string;
  readonly approvalId: string;
}

export interface Store {
  // planning jobs (plan-jobs.ts): kept for a day
  putPlanJob(job: PlanJobRecord): Promise<void>; // ConflictError if the jobId exists
  getPlanJob(jobId: string): Promise<PlanJobRecord | undefined>; // ConsistentRead
  /** Records a pending job's outcome; undefined when the job is missing or already finished (the first word stays). */
  finishPlanJob(jobId: string, outcome: PlanJobOutcome): Promise<PlanJobRecord | undefined>;

  // runs
  createRun(run: RunRecord): Promise<void>; // ConflictError if the runId exists
  /**
   * Claims an Idempotency-Key for a new run, recording the hash of the request that claimed it (conditional put, the
   * first claimant wins): returns the claim that holds the key, the given one if it won.
   */
  claimRunKey(key: string, runId: string, requestHash: string): Promise<RunKeyClaim>;
  getRun(runId: string): Promise<RunRecord | undefined>; // ConsistentRead
  /**
   * Conditional update: applies only when the run exists and its status is one of `from` (at least one); returns the
   * new record or undefined. Fields left undefined in `patch` are kept, fields named in `remove` are dropped;
   * `updatedAt` defaults to the store's clock.
   */
  updateRun(
    runId: string,
    from: readonly RunStatus[],
    patch: Partial<Omit<RunRecord, 'runId' | 'createdAt'>>,
    options?: { readonly remove?: readonly RunRemovableField[]; readonly announce?: OutboxEntry },
  ): Promise<RunRecord | undefined>;
  /**
   * Adds `member` to one of the run's string sets, only if it is not there yet: true for the first caller, false
   * for every repeat (and for an unknown run). A duplicate event answered by this is a no-op.
   */
  markRunOnce(runId: string, attribute: RunSetAttribute, member: string): Promise<boolean>;
  /**
   * Takes `member` out of one of the run's string sets (nothing for a member or run that is not there): a caller
   * that marked work taken and could not finish it lets the repeat take it again.
   */
  unmarkRunOnce(runId: string, attribute: RunSetAttribute, member: string): Promise<void>;
  /** Newest first; `before` (a listed run's position) continues a listing after that run. */
  listRuns(options?: { status?: RunStatus; limit?: number; before?: RunPosition }): Promise<RunRecord[]>;

  // plan revisions: immutable, conditional put on revision (a store may hand out one shared, frozen copy of each)
  putPlanRevision(runId: string, plan: Plan, reason: string): Promise<void>; // ConflictError if it exists
  getPlanRevision(
    runId: string,
    revision?: number,
  ): Promise<{ plan: Plan; reason: string; createdAt: string } | undefined>;
  listPlanRevisions(runId: string): Promise<{ revision: number; reason: string; createdAt: string }[]>;

  // steps
  putSteps(steps: readonly StepRecord[]): Promise<void>; // each a conditional put (attribute_not_exists); existing ones are left alone
  getStep(runId: string, stepId: string): Promise<StepRecord | undefined>; // ConsistentRead
  listSteps(runId: string): Promise<StepRecord[]>; // ConsistentRead
  /** Some steps of a run, in one round trip where the store can (ConsistentRead); unknown ids are left out. */
  getSteps(runId: string, stepIds: readonly string[]): Promise<StepRecord[]>;
  /**
   * The run, one of its steps and, if `attempt` names one, that attempt of the step (and, if asked, `others` of the
   * run's steps): what every step action reads first, in one round trip where the store can (ConsistentRead).
   * Whatever does not exist comes back undefined (or is left out of `others`).
   */
  getStepWithRun(runId: string, stepId: string, attempt?: AttemptRef, others?: readonly string[]): Promise<StepWithRun>;
  /**
   * Conditional step transition: applies `patch` only when the step's generation equals `generation` and its status
   * is one of `from` (and, if given, `claimedBy` is absent). Returns the new record, or undefined if the condition
   * failed (someone else moved it).
   */
  transitionStep(
    runId: string,
    stepId: string,
    condition: { generation: number; from: readonly StepStatus[]; unclaimed?: boolean },
    patch: StepPatch,
    announce?: OutboxEntry,
  ): Promise<StepRecord | undefined>;
  /**
   * Counts one finished upstream step against a dependent, exactly once per edge and generation:
   * `remaining -= 1`, `released += upstreamId`, only if `upstreamId` is one of `upstream`, is not yet in `released`
   * and the generation matches. Returns the new record, or undefined if this edge was already counted (or is no
   * edge of this generation): read the step to recover. `upstreamGeneration`, the generation of the upstream step
   * that finished: a generation the dependent's `staleReleases` names as stale (or an earlier one) counts nothing.
   */
  releaseDependency(
    runId: string,
    stepId: string,
    generation: number,
    upstreamId: string,
    upstreamGeneration?: number,
  ): Promise<StepRecord | undefined>;

  /**
   * `releaseDependency` for the edge that must be the step's last: applies only if, besides that method's
   * conditions, `remaining` is 1 and the step is `pending`, and then also moves it to `ready` in the same write (a
   * step waiting for one upstream step is started by one write instead of two). Undefined when any condition failed:
   * read the step to find out why (counted before, not the last edge, not pending, another generation).
   */
  releaseLastDependency(
    runId: string,
    stepId: string,
    generation: number,
    upstreamId: string,
    upstreamGeneration?: number,
  ): Promise<StepRecord | undefined>;
  /**
   * Starts the step's next generation, only if its generation is still `fromGeneration` (undefined = lost the race,
   * someone else started it): generation + 1, status / upstream / remaining / released from `next`, attempts 0,
   * claimedBy, output, error, confidence, startedAt and finishedAt cleared, and the ended generation's result
   * appended to `history`. A late result of the old generation then fails every generation condition.
   */
  startGeneration(
    runId: string,
    stepId: string,
    fromGeneration: number,
    next: NextGeneration,
  ): Promise<StepRecord | undefined>;

  /**
   * The run's frontier: records that steps ended a line of work (a sink finished, or a step whose dependents were
   * already settled; keys such as `<stepId>#<generation>`, each counted once however often it is recorded) and
   * returns every key recorded so far. One write per sink, none for a step that hands over to a dependent.
   */
  recordFrontier(runId: string, keys: readonly string[]): Promise<readonly string[]>;

  // watches: which steps of which runs watch an outside resource
  /** Records watchers (idempotent: an entry written twice is one entry). */
  putWatches(runId: string, entries: readonly WatchEntry[]): Promise<void>;
  /** Every run step ever recorded as watching `resourceKey` (a later revision may no longer watch it: check the plan). */
  listWatchers(resourceKey: string): Promise<{ runId: string; stepId: string }[]>;

  // attempts (evidence)
  getAttempt(runId: string, stepId: string, ref: AttemptRef): Promise<AttemptRecord | undefined>; // ConsistentRead
  putAttempt(attempt: AttemptRecord): Promise<boolean>; // false if that attempt number already exists
  updateAttempt(attempt: AttemptRecord): Promise<void>; // replaces an existing attempt; NotFoundError if missing
  listAttempts(runId: string, stepId?: string): Promise<AttemptRecord[]>;

  // usage sums
  /**
   * Adds an attempt's spend to its step's sums and to its run's, each exactly once per `key` (the attempt, see
   * engine/budget.ts `usageKey`): each item's add is conditional on the key not being counted there yet, so a
   * repeated attempt (a retried invocation) adds nothing. Returns both sums after the add (or as they stand).
   */
  addUsage(runId: string, stepId: string, key: string, spend: Spend): Promise<{ run: Spend; step: Spend }>;

  // the outbox: every write above that takes `announce` carries its events in the same item (see events/outbox.ts)
  /** Announces events that belong to no other write, in an item of their own (once per entry id). */
  announce(entry: OutboxEntry): Promise<void>;
  /** The relay's side: records announced events in the run's audit log (a repeat of an entry changes nothing). */
  recordEvents(entries: readonly OutboxEntry[]): Promise<void>;
  /** The audit log behind GET /runs/{id}/events, in order; `after` (a seq) returns only later events, for polling. */
  listEvents(runId: string, options?: { after?: string; limit?: number }): Promise<RunEventRecord[]>;

  // approvals
  putApproval(approval: ApprovalRecord, announce?: OutboxEntry): Promise<boolean>; // false if it exists
  getApproval(approvalId: string): Promise<ApprovalRecord | undefined>; // ConsistentRead
  /** Decides a pending approval: only one decision ever wins (undefined when it was no longer pending). */
  decideApproval(
    approvalId: string,
    decision: Pick<ApprovalRecord, 'status' | 'decidedAt' | 'decidedBy' | 'comment' | 'output'>,
    announce?: OutboxEntry,
  ): Promise<ApprovalRecord | undefined>;
  /**
   * A run's approvals, oldest first, read consistently (from the run's own items, not an index): what a decision
   * that closes steps or runs reads, so an approval created a moment ago is never missed. `stepId`: only that
   * step's approvals, and only theirs are read in full.
   */
  listRunApprovals(runId: string, options?: { readonly stepId?: string }): Promise<ApprovalRecord[]>;
  /** Oldest first; `after` (a listed approval's position) continues a listing after that approval. */
  listApprovals(options?: {
    status?: ApprovalRecord['status'];
    runId?: string;
    limit?: number;
    after?: ApprovalPosition;
  }): Promise<ApprovalRecord[]>;

  // idempotency records for side-effecting capabilities
  /**
   * Starts an idempotent call: returns undefined when this caller owns the key, else the existing record. A record
   * whose `expiresAt` is before `now` (both epoch seconds) counts as absent, so an expired in_progress is taken over.
   */
  beginIdempotent(key: string, expiresAt: number, now: number): Promise<IdempotencyRecord | undefined>;
  /** Records the result; the first completion wins (a late duplicate does not replace it). */
  completeIdempotent(key: string, result: unknown, expiresAt: number): Promise<void>;
  /** Drops an in-progress record after a failure so a retry may call again (a completed record is kept). */
  abortIdempotent(key: string): Promise<void>;
}
