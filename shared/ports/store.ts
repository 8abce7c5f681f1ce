/**
 * The store port: everything cairn persists. One AWS adapter (DynamoDB, which the embedded stack runs against
 * dynalite through the same SDK client). Every write that a retry, a crash or a duplicate event can repeat is a
 * single-item conditional write; losing a condition is reported as a result (or a ConflictError), never silently.
 */
import type { OutboxEntry } from '../events/outbox.ts';
import type { Plan, RunStatus, StepError, StepStatus } from '../plan/schema.ts';
import type { Spend } from './capabilities.ts';
import type { PlanJobOutcome, PlanJobRecord } from './plan-jobs.ts';
import type { ApprovalRecord } from './records/approvals.ts';
import type { RunEventRecord, RunKeyClaim, RunRecord } from './records/runs.ts';
import type {
  AttemptRecord,
  CompensationRecord,
  IdempotencyRecord,
  StepRecord,
  TraceEntry,
  WatchEntry,
} from './records/steps.ts';

// The records live by what they describe (./records); this file keeps the port and the shapes of its calls, and
// every caller names both from here.
export type { ApprovalRecord, HeldRevision } from './records/approvals.ts';
export type {
  ReplanDecline,
  ReplanRecord,
  RestartedRecord,
  RevisionApplication,
  RunEventRecord,
  RunKeyClaim,
  RunRecord,
  TerminalRecord,
} from './records/runs.ts';
export type {
  AttemptRecord,
  CompensationRecord,
  IdempotencyRecord,
  StepGenerationRecord,
  StepKindName,
  StepRecord,
  TraceEntry,
  WatchEntry,
} from './records/steps.ts';

/** Run record string sets that `Store.markRunOnce` adds to. */
export type RunSetAttribute = 'replanFingerprints' | 'handledFailures' | 'replanDeclines';

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
   * it was invalidated, and its answer came late) and is not counted (see `Store.releaseDependency`). An unfinished
   * upstream step that does not move is named with the generation before its current one.
   */
  readonly staleReleases?: Readonly<Record<string, number>>;
}

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
  /**
   * Takes keys off the run's frontier: the generations a move ended. A sink moved on is settled again only when its
   * new generation ends, so its old key would make every other step's end a look at the whole run.
   */
  forgetFrontier(runId: string, keys: readonly string[]): Promise<void>;

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
  /** The relay's side: the entries with the events their writes kept out of line read back (the others as they are). */
  restoreAnnouncements(entries: readonly OutboxEntry[]): Promise<OutboxEntry[]>;
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
   * Gives a pending approval the task token that waits on it (a revision approval's, written before its wait
   * started): false when it is no longer pending, so the caller answers that wait itself.
   */
  holdApprovalToken(approvalId: string, taskToken: string): Promise<boolean>;
  /**
   * A run's approvals, oldest first, read consistently (from the run's own items, not an index): what a decision
   * that closes steps or runs reads, so an approval created a moment ago is never missed. `stepId`: only that
   * step's approvals, and only theirs are read in full.
   */
  listRunApprovals(runId: string, options?: { readonly stepId?: string }): Promise<ApprovalRecord[]>;
  /**
   * Hands a pending approval to the wait that now holds its step (a retried wait's new task token), so the person
   * is asked once; undefined when it was no longer pending (decided meanwhile: that decision answers the new wait).
   */
  moveApprovalWait(approvalId: string, taskToken: string): Promise<ApprovalRecord | undefined>;
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
