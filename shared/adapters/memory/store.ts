/**
 * The part of the store port (shared/ports/store.ts) a run's shell and its executions use, kept in memory: for the
 * deterministic simulation (bench/sim) and for tests that want the shell without a table. It keeps what the DynamoDB
 * adapter keeps where it matters to a reader: records are replaced whole (never mutated), a conditional write that
 * loses answers as the table does, steps list in their key order (`STEP#<stepId>`), a run's approvals oldest first,
 * revisions immutable. Each projected record carries the version of the batch that wrote it (`v`), which only the
 * run log (run-log.ts) reads and writes: the table's `v` attribute.
 */

import { DEFAULT_RUN_LIST_LIMIT, DEFAULT_TENANT, tenantOf } from '../../config/defaults.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { Plan, RunStatus } from '../../plan/schema.ts';
import type {
  ApprovalRecord,
  AttemptRecord,
  RunRecord,
  StepPatch,
  StepRecord,
  Store,
  WatchEntry,
} from '../../ports/store.ts';

/** What the in-memory store implements: what loading, projecting and a step's execution use. */
export type MemoryStorePort = Pick<
  Store,
  | 'createRun'
  | 'getRun'
  | 'listRuns'
  | 'getStep'
  | 'listSteps'
  | 'transitionStep'
  | 'listRunApprovals'
  | 'getPlanRevision'
  | 'putPlanRevision'
  | 'putWatches'
  | 'listWatchers'
  | 'putAttempt'
  | 'getAttempt'
  | 'updateAttempt'
>;

/** A record and the version of the batch that last projected it (0: written outside the log, e.g. createRun). */
export interface Versioned<T> {
  readonly value: T;
  readonly v: number;
}

interface StoredRevision {
  readonly plan: Plan;
  readonly reason: string;
  readonly createdAt: string;
}

/** The tables, shared by the store's operations and the run log's projection (as one DynamoDB table is). */
export class MemoryTables {
  readonly runs = new Map<string, Versioned<RunRecord>>();
  /** The runs of each status (the table's GSI_STATUS): a status listing reads these runs alone. */
  readonly runsByStatus = new Map<RunStatus, Set<string>>();
  readonly steps = new Map<string, Map<string, Versioned<StepRecord>>>();
  readonly approvals = new Map<string, Versioned<ApprovalRecord>>();
  /** A run's approval references (APPROVALREF#), by which its approvals are listed. */
  readonly approvalRefs = new Map<string, Set<string>>();
  readonly revisions = new Map<string, Map<number, StoredRevision>>();
  /** resourceKey → `runId\u0000stepId` (a set: a watch written twice is one). */
  readonly watches = new Map<string, Set<string>>();
  /** Attempts recorded apart from their step (a person's wait's), by `runId\u0000stepId\u0000generation\u0000attempt`. */
  readonly attempts = new Map<string, AttemptRecord>();

  /** Writes the run and moves its entry in the listing by status, as the run item's index keys do. */
  putRun(run: Versioned<RunRecord>): void {
    const before = this.runs.get(run.value.runId)?.value.status;
    if (before !== undefined) this.runsByStatus.get(before)?.delete(run.value.runId);
    this.runs.set(run.value.runId, run);
    let ids = this.runsByStatus.get(run.value.status);
    if (ids === undefined) {
      ids = new Set();
      this.runsByStatus.set(run.value.status, ids);
    }
    ids.add(run.value.runId);
  }

  stepsOf(runId: string): Map<string, Versioned<StepRecord>> {
    let steps = this.steps.get(runId);
    if (steps === undefined) {
      steps = new Map();
      this.steps.set(runId, steps);
    }
    return steps;
  }

  refsOf(runId: string): Set<string> {
    let refs = this.approvalRefs.get(runId);
    if (refs === undefined) {
      refs = new Set();
      this.approvalRefs.set(runId, refs);
    }
    return refs;
  }
}

export interface MemoryStore extends MemoryStorePort {
  readonly tables: MemoryTables;
}

/** Shared by every reader, as the DynamoDB adapter's revision cache is: frozen, so a caller mutating one fails. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** A step patch as transitionStep applies it (appendTrace appends; every other field replaces). */
function patched(step: StepRecord, patch: StepPatch, updatedAt: string): StepRecord {
  const { appendTrace, trace, attemptRecord: _carried, ...fields } = patch;
  const next: Record<string, unknown> = { ...step, ...fields, updatedAt };
  if (trace !== undefined) next.trace = trace;
  if (appendTrace !== undefined) next.trace = [...(trace ?? step.trace), ...appendTrace];
  return next as unknown as StepRecord;
}

const attemptKey = (runId: string, stepId: string, generation: number, attempt: number): string =>
  [runId, stepId, generation, attempt].join('\u0000');

export function createMemoryStore(options: { readonly now?: () => Date } = {}): MemoryStore {
  const now = options.now ?? (() => new Date());
  const tables = new MemoryTables();
  return {
    tables,
    async createRun(run) {
      if (tables.runs.has(run.runId)) throw new ConflictError(`run ${run.runId} already exists`);
      tables.putRun({ value: run, v: 0 });
    },
    async getRun(runId) {
      return tables.runs.get(runId)?.value;
    },
    async listRuns(options = {}) {
      const { status, before, limit = DEFAULT_RUN_LIST_LIMIT } = options;
      const tenant = options.tenant ?? DEFAULT_TENANT;
      const ids = status === undefined ? tables.runs.keys() : (tables.runsByStatus.get(status) ?? []);
      const position = (run: Pick<RunRecord, 'createdAt' | 'runId'>): string => `${run.createdAt}#${run.runId}`;
      const bound = before === undefined ? undefined : position(before);
      return [...ids]
        .flatMap((id) => tables.runs.get(id)?.value ?? [])
        .filter((run) => tenantOf(run) === tenant && (bound === undefined || position(run) < bound))
        .sort((a, b) => (position(a) < position(b) ? 1 : position(a) > position(b) ? -1 : 0))
        .slice(0, limit);
    },
    async getStep(runId, stepId) {
      return tables.steps.get(runId)?.get(stepId)?.value;
    },
    async listSteps(runId) {
      const steps = [...(tables.steps.get(runId)?.values() ?? [])].map((s) => s.value);
      // The table's order: by sort key, STEP#<stepId>.
      return steps.sort((a, b) => (a.stepId < b.stepId ? -1 : a.stepId > b.stepId ? 1 : 0));
    },
    async transitionStep(runId, stepId, condition, patch) {
      const steps = tables.steps.get(runId);
      const stored = steps?.get(stepId);
      if (steps === undefined || stored === undefined) return undefined;
      const step = stored.value;
      if (step.generation !== condition.generation || !condition.from.includes(step.status)) return undefined;
      if (condition.unclaimed === true && step.claimedBy !== undefined) return undefined;
      const next = patched(step, patch, now().toISOString());
      // Not a projection: the batch version stays (an execution's write is not the decider's).
      steps.set(stepId, { value: next, v: stored.v });
      return next;
    },
    async listRunApprovals(runId, options = {}) {
      const ids = [...(tables.approvalRefs.get(runId) ?? [])];
      return ids
        .flatMap((id) => tables.approvals.get(id)?.value ?? [])
        .filter((a) => options.stepId === undefined || a.stepId === options.stepId)
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.approvalId.localeCompare(b.approvalId));
    },
    async getPlanRevision(runId, revision) {
      const revisions = tables.revisions.get(runId);
      if (revisions === undefined) return undefined;
      if (revision !== undefined) return revisions.get(revision);
      const latest = Math.max(...revisions.keys());
      return revisions.get(latest);
    },
    async putPlanRevision(runId, plan, reason) {
      let revisions = tables.revisions.get(runId);
      if (revisions === undefined) {
        revisions = new Map();
        tables.revisions.set(runId, revisions);
      }
      if (revisions.has(plan.revision))
        throw new ConflictError(`plan revision ${plan.revision} of run ${runId} already exists`);
      // Kept as a copy (the caller's plan object stays the caller's), as the table keeps what was written.
      const stored = deepFreeze(JSON.parse(JSON.stringify(plan)) as Plan);
      revisions.set(plan.revision, { plan: stored, reason, createdAt: now().toISOString() });
    },
    async putWatches(tenant, runId, entries: readonly WatchEntry[]) {
      for (const { stepId, resourceKey } of entries) {
        const key = `${tenant}\u0000${resourceKey}`;
        let watchers = tables.watches.get(key);
        if (watchers === undefined) {
          watchers = new Set();
          tables.watches.set(key, watchers);
        }
        watchers.add(`${runId}\u0000${stepId}`);
      }
    },
    async listWatchers(tenant, resourceKey) {
      return [...(tables.watches.get(`${tenant}\u0000${resourceKey}`) ?? [])].map((key) => {
        const [runId = '', stepId = ''] = key.split('\u0000');
        return { runId, stepId };
      });
    },
    async putAttempt(attempt) {
      const key = attemptKey(attempt.runId, attempt.stepId, attempt.generation, attempt.attempt);
      // A second copy of the same attempt follows the first one's record, as the table's condition does.
      if (tables.attempts.has(key)) return false;
      tables.attempts.set(key, attempt);
      return true;
    },
    async getAttempt(runId, stepId, ref) {
      return tables.attempts.get(attemptKey(runId, stepId, ref.generation, ref.attempt));
    },
    async updateAttempt(attempt) {
      const key = attemptKey(attempt.runId, attempt.stepId, attempt.generation, attempt.attempt);
      if (!tables.attempts.has(key)) throw new NotFoundError(`attempt ${key.replaceAll('\u0000', '/')} not found`);
      tables.attempts.set(key, attempt);
    },
  };
}
