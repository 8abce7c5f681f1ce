/**
 * The store port: everything cairn persists. One AWS adapter (DynamoDB, which the embedded stack runs against
 * dynalite through the same SDK client). Every write that a retry, a crash or a duplicate event can repeat is a
 * single-item conditional write; losing a condition is reported as a result (or a ConflictError), never silently.
 */
import type { OutboxEntry } from '../events/outbox.ts';
import type { Plan, RunStatus, StepError, StepStatus } from '../plan/schema.ts';
import type { AdmissionStore } from './admission.ts';
import type { PlanJobOutcome, PlanJobRecord } from './plan-jobs.ts';
import type { ApprovalRecord } from './records/approvals.ts';
import type { RunEventRecord, RunKeyClaim, RunRecord } from './records/runs.ts';
import type {
  AttemptRecord,
  CompensationRecord,
  IdempotencyRecord,
  StepCounts,
  StepRecord,
  TraceEntry,
  WatchEntry,
} from './records/steps.ts';

// The records live by what they describe (./records); this file keeps the port and the shapes of its calls, and
// every caller names both from here.
export type { ApprovalRecord, HeldRevision } from './records/approvals.ts';
export type {
  RaisedLimits,
  ReplanDecline,
  ReplanRecord,
  RestartedRecord,
  RevisionApplication,
  RunAction,
  RunEventRecord,
  RunKeyClaim,
  RunRecord,
  TerminalRecord,
} from './records/runs.ts';
export type {
  AttemptRecord,
  CompensationRecord,
  IdempotencyRecord,
  StepCounts,
  StepGenerationRecord,
  StepKindName,
  StepRecord,
  TraceEntry,
  WatchEntry,
} from './records/steps.ts';

/**
 * The plan a run carries only until it starts (then revision 1 holds it): `updateRun` may remove these, so that
 * the run record every step action reads stays small.
 */
export type RunPlanField = 'submittedPlan' | 'candidatePlan' | 'planStamp';

/**
 * Run fields `updateRun` may drop: the plan copies, and a finished run's terminal record, waiter and cancellation
 * mark when it reopens.
 */
export type RunRemovableField = RunPlanField | 'terminal' | 'waiterToken' | 'cancelling';

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
   * since it is the one the step's status was decided with. A later generation of the step keeps it as an attempt
   * of the ended one (the run log moves it to an item of its own). It is never updated (`updateAttempt` is for
   * attempts recorded apart).
   */
  readonly attemptRecord?: AttemptRecord;
}

/** A step's status alone (`Store.listStepStatuses`). */
export interface StepStatusEntry {
  readonly stepId: string;
  readonly status: StepStatus;
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

/** Admission's records (./admission.ts) are the store's too: kept in the same table, by every adapter. */
export interface Store extends AdmissionStore {
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
  claimRunKey(tenant: string, key: string, runId: string, requestHash: string): Promise<RunKeyClaim>;
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
   * One tenant's runs (absent: the default tenant's), newest first; `before` (a listed run's position) continues a
   * listing after that run. Reads only the tenant's index partitions.
   */
  listRuns(options?: {
    tenant?: string;
    status?: RunStatus;
    limit?: number;
    before?: RunPosition;
  }): Promise<RunRecord[]>;
  /** The run's steps by status as its last decision left them (kept with it: no step is read); absent: none yet. */
  getStepCounts(runIds: readonly string[]): Promise<ReadonlyMap<string, StepCounts>>;

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
  /**
   * Every step's status and nothing else (ConsistentRead), in the order of listSteps: what a reader needs to derive
   * the run's status and its groups' without reading, decoding or filling in the steps themselves.
   */
  listStepStatuses(runId: string): Promise<StepStatusEntry[]>;
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
  // watches: which steps of which runs watch an outside resource
  /** Records watchers (idempotent: an entry written twice is one entry). */
  putWatches(tenant: string, runId: string, entries: readonly WatchEntry[]): Promise<void>;
  /**
   * Every step of the tenant's runs ever recorded as watching `resourceKey` (a later revision may no longer watch
   * it: check the plan). Another tenant's watchers of the same key are not read.
   */
  listWatchers(tenant: string, resourceKey: string): Promise<{ runId: string; stepId: string }[]>;

  // attempts (evidence)
  getAttempt(runId: string, stepId: string, ref: AttemptRef): Promise<AttemptRecord | undefined>; // ConsistentRead
  putAttempt(attempt: AttemptRecord): Promise<boolean>; // false if that attempt number already exists
  updateAttempt(attempt: AttemptRecord): Promise<void>; // replaces an existing attempt; NotFoundError if missing
  listAttempts(runId: string, stepId?: string): Promise<AttemptRecord[]>;

  // the outbox: every write above that takes `announce` carries its events in the same item (see events/outbox.ts)
  /** Announces events that belong to no other write, in an item of their own (once per entry id). */
  announce(entry: OutboxEntry): Promise<void>;
  /** The relay's side: records announced events in the run's audit log (a repeat of an entry changes nothing). */
  recordEvents(entries: readonly OutboxEntry[]): Promise<void>;
  /** The relay's side: the entries with the events their writes kept out of line read back (the others as they are). */
  restoreAnnouncements(entries: readonly OutboxEntry[]): Promise<OutboxEntry[]>;
  /**
   * The audit log behind GET /runs/{id}/events, in the order of the run's decisions (a seq that lands later sorts
   * later); `after` (a seq) returns only later events, for tailing; `stepId` only that step's events.
   */
  listEvents(
    runId: string,
    options?: { readonly after?: string; readonly limit?: number; readonly stepId?: string },
  ): Promise<RunEventRecord[]>;

  // approvals
  putApproval(approval: ApprovalRecord, announce?: OutboxEntry): Promise<boolean>; // false if it exists
  getApproval(approvalId: string): Promise<ApprovalRecord | undefined>; // ConsistentRead
  /**
   * A run's approvals, oldest first, read consistently (from the run's own items, not an index): what a decision
   * that closes steps or runs reads, so an approval created a moment ago is never missed. `stepId`: only that
   * step's approvals, and only theirs are read in full.
   */
  listRunApprovals(runId: string, options?: { readonly stepId?: string }): Promise<ApprovalRecord[]>;
  /**
   * One tenant's approvals (absent: the default tenant's), oldest first; `after` (a listed approval's position)
   * continues a listing after that approval.
   */
  listApprovals(options?: {
    tenant?: string;
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
