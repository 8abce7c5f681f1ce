/**
 * Where a run's decisions are committed: the run's log (its head: the last batch, which only it can leave
 * unfinished). A decision (the events of a batch of commands) commits with
 * one single-item conditional write at the run's next version, so two writers can never both commit the same
 * version, and a redelivered batch finds its version taken. The batch carries what follows from it: the records it
 * changed as they now are (the projections everything else reads, written after the commit, each only over an older
 * copy), the effects to perform and the events to publish (its outbox). A writer that dies between the commit and
 * the end of that work leaves the run's last batch to be finished by whoever loads the run next: only the last one,
 * since nobody commits a batch before the one before it is finished.
 */
import type { Effect } from '../engine/run/effects.ts';
import type { RunEvent } from '../engine/run/events.ts';
import type { Plan } from '../plan/schema.ts';
import type { DomainEvent } from './events.ts';
import type { ApprovalRecord } from './records/approvals.ts';
import type { RunRecord } from './records/runs.ts';
import type { StepCounts, StepRecord } from './records/steps.ts';

/** The records a batch changed, as they are after it. */
export interface RecordImages {
  readonly run?: RunRecord | undefined;
  readonly steps: readonly StepRecord[];
  /** Step records whose generation moved on: what the step's execution wrote on the old one is dropped. */
  readonly moved: readonly string[];
  readonly approvals: readonly ApprovalRecord[];
  /** Plan revisions the batch made current (revision 1 at the start), with why: kept immutable, with their watches. */
  readonly revisions: readonly { readonly plan: Plan; readonly reason: string }[];
}

export interface CommittedBatch {
  readonly runId: string;
  /** 1, 2, …: the run's versions, one per committed batch. */
  readonly version: number;
  readonly at: string;
  readonly events: readonly RunEvent[];
  readonly images: RecordImages;
  readonly effects: readonly Effect[];
  readonly published: readonly DomainEvent[];
  /** The run's steps by status after the batch (what a list of runs shows, without reading a step). */
  readonly counts: StepCounts;
}

export interface RunLog {
  /** The run's last committed batch (its version is the run's), or undefined before the first. */
  last(runId: string): Promise<CommittedBatch | undefined>;
  /** Commits a batch at its version; false when that version is taken (another writer committed first). */
  commit(batch: CommittedBatch): Promise<boolean>;
  /** Writes the batch's record images, each only over a copy older than the batch; then its announcement goes out. */
  project(batch: CommittedBatch): Promise<void>;
}
