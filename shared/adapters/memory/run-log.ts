/**
 * The run's log in memory (shared/ports/run-log.ts), with the DynamoDB adapter's semantics
 * (shared/adapters/aws/dynamo-run-log.ts): a batch commits only at a version nobody has taken, and projecting a batch
 * writes each of its record images only over a copy older than the batch (a repeat after a crash, or a slow writer
 * behind a newer one, changes nothing). A step's image never writes what its execution owns on the record (`output`,
 * the carried attempt record), and a generation that moved on drops it.
 *
 * A committed batch is kept as it was committed: a batch, like the records in it, is never changed once made (the
 * shell replaces records, it does not mutate them), so readers may share it. The behaviour suite
 * (test/support/run-log-behaviour.ts) holds this adapter and the DynamoDB one to the same answers.
 */
import { tenantOf } from '../../config/defaults.ts';
import { isConflictError } from '../../errors.ts';
import type { ApprovalRecord } from '../../ports/records/approvals.ts';
import type { StepRecord } from '../../ports/records/steps.ts';
import type { CommittedBatch, RunLog } from '../../ports/run-log.ts';
import type { MemoryStore, MemoryTables, Versioned } from './store.ts';

/** What the execution owns on a step record: the decider's image never writes these. */
const EXECUTION_FIELDS = ['output', 'attemptRecord'] as const;

/** Over a copy older than `version` only (or where there is none). */
const olderThan = (stored: Versioned<unknown> | undefined, version: number): boolean =>
  stored === undefined || stored.v < version;

function projectStep(tables: MemoryTables, step: StepRecord, version: number, moved: boolean): void {
  const steps = tables.stepsOf(step.runId);
  const stored = steps.get(step.stepId);
  if (!olderThan(stored, version)) return;
  const next: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(step))
    if (value !== undefined && !(EXECUTION_FIELDS as readonly string[]).includes(name)) next[name] = value;
  if (!moved && stored !== undefined) {
    const kept = stored.value as unknown as Record<string, unknown>;
    for (const name of EXECUTION_FIELDS) if (kept[name] !== undefined) next[name] = kept[name];
  }
  steps.set(step.stepId, { value: next as unknown as StepRecord, v: version });
}

function projectApproval(tables: MemoryTables, approval: ApprovalRecord, version: number): void {
  // The run's reference first, as putApproval writes it: a run's approvals are read by their references.
  tables.refsOf(approval.runId).add(approval.approvalId);
  if (olderThan(tables.approvals.get(approval.approvalId), version))
    tables.approvals.set(approval.approvalId, { value: approval, v: version });
}

export function createMemoryRunLog(store: MemoryStore): RunLog {
  const { tables } = store;
  /** runId → version → the batch (the LOG#<version> items), and the run's highest version. */
  const logs = new Map<string, { readonly batches: Map<number, CommittedBatch>; top: number }>();
  return {
    async last(runId) {
      const log = logs.get(runId);
      return log?.batches.get(log.top);
    },

    async commit(batch) {
      let log = logs.get(batch.runId);
      if (log === undefined) {
        log = { batches: new Map(), top: 0 };
        logs.set(batch.runId, log);
      }
      if (log.batches.has(batch.version)) return false;
      log.batches.set(batch.version, batch);
      log.top = Math.max(log.top, batch.version);
      return true;
    },

    async project({ runId, version, images }) {
      for (const { plan, reason } of images.revisions) {
        const watches = plan.steps.flatMap((step) =>
          (step.watches ?? []).map((resourceKey) => ({ stepId: step.id, resourceKey })),
        );
        // A batch that makes a revision current changes the run too (its revision), so its image names the tenant.
        if (watches.length > 0) await store.putWatches(tenantOf(images.run ?? {}), runId, watches);
        // Written by this batch's first projection already, when this is a repeat: the same revision.
        await store.putPlanRevision(runId, plan, reason).catch((error: unknown) => {
          if (!isConflictError(error)) throw error;
        });
      }
      if (images.run !== undefined && olderThan(tables.runs.get(runId), version))
        tables.putRun({ value: images.run, v: version });
      const moved = new Set(images.moved);
      for (const step of images.steps) projectStep(tables, step, version, moved.has(step.stepId));
      for (const approval of images.approvals) projectApproval(tables, approval, version);
    },
  };
}
