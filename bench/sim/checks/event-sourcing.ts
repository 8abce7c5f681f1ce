/**
 * The event-sourcing law, batch by batch: the records a committed batch carries (its images, the shell's copy of
 * the run after deciding it) are what evolving the run's earlier state by the batch's events gives (evolve.ts). The
 * shell's copy may have been loaded from the store's projections (after a crash, a taken version, another shell):
 * a projection that lost or bent a field shows here as a copy that no longer follows from the log. And at the end,
 * the store's records are the replica's: every batch was projected, each over older copies only.
 *
 * Records are compared as a reader of the table sees them: key order does not matter, and a field holding
 * `undefined` is a field that is not there (JSON, and DynamoDB, drop both alike). Compared structurally, without
 * building text: it runs on every record of every committed batch.
 */

import type { MemoryStorePort } from '../../../shared/adapters/memory/store.ts';
import { evolveInto } from '../../../shared/engine/run/evolve.ts';
import { withPlannedSteps } from '../../../shared/engine/run/planned.ts';
import type { DraftState } from '../../../shared/engine/run/state.ts';
import type { CommittedBatch } from '../../../shared/ports/run-log.ts';

const NONE: ReadonlySet<string> = new Set();

/** Whether two JSON-like values are the same, leaving out `ignore`d fields at the top level. */
export function same(a: unknown, b: unknown, ignore: ReadonlySet<string> = NONE): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  for (const key in left) {
    if (ignore.has(key)) continue;
    if (!same(left[key], right[key])) return false;
  }
  for (const key in right) {
    if (ignore.has(key) || key in left) continue;
    if (right[key] !== undefined) return false;
  }
  return true;
}

/** The first field (top level) where two records differ, or undefined when they are the same. */
export function firstDifference(a: unknown, b: unknown, ignore: ReadonlySet<string> = NONE): string | undefined {
  if (same(a, b, ignore)) return undefined;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return '(whole record)';
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
  for (const key of keys) {
    if (ignore.has(key) || same(left[key], right[key])) continue;
    return `${key}: ${short(left[key])} vs ${short(right[key])}`;
  }
  return '(whole record)';
}

function short(value: unknown): string {
  if (value === undefined) return 'absent';
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** What a step's execution owns on its record: the decider's state never holds it. */
export const EXECUTION_FIELDS: ReadonlySet<string> = new Set(['output', 'attemptRecord']);

/** What the table's step may hold beyond the decider's image: the execution's write, and when it wrote. */
const STORED_STEP_FIELDS: ReadonlySet<string> = new Set([...EXECUTION_FIELDS, 'updatedAt']);

/** Applies a committed batch to the replica and returns how the batch's images differ from it. */
export function replayBatch(replica: DraftState, batch: CommittedBatch): string[] {
  const problems: string[] = [];
  if (batch.version !== replica.version + 1)
    problems.push(`committed at version ${batch.version} after version ${replica.version}`);
  try {
    for (const event of batch.events) evolveInto(replica, event);
  } catch (error) {
    problems.push(`evolving its events threw: ${(error as Error).message}`);
    return problems;
  }
  replica.version = batch.version;
  const { images } = batch;
  if (images.run !== undefined) {
    const diff = firstDifference(replica.run, images.run);
    if (diff !== undefined) problems.push(`run record differs from the log's: ${diff}`);
  }
  for (const step of images.steps) {
    const diff = firstDifference(replica.steps.get(step.stepId), step, EXECUTION_FIELDS);
    if (diff !== undefined) problems.push(`step ${step.stepId} differs from the log's: ${diff}`);
  }
  for (const approval of images.approvals) {
    const diff = firstDifference(replica.approvals.get(approval.approvalId), approval);
    if (diff !== undefined) problems.push(`approval ${approval.approvalId} differs from the log's: ${diff}`);
  }
  return problems;
}

/** How the store's records differ from the replica's (the run's log, evolved), once the world is quiet. */
export async function projectionDifferences(store: MemoryStorePort, replica: DraftState): Promise<string[]> {
  const problems: string[] = [];
  const runId = replica.run.runId;
  const run = await store.getRun(runId);
  const runDiff = firstDifference(run, replica.run);
  if (runDiff !== undefined) problems.push(`the store's run record is not the log's: ${runDiff}`);
  // The steps its start still implies have no item: they are read as every reader reads them (planned.ts).
  const listed = run === undefined ? [] : withPlannedSteps(run, replica.plan, await store.listSteps(runId));
  const stored = new Map(listed.map((s) => [s.stepId, s]));
  for (const [stepId, step] of replica.steps) {
    const diff = firstDifference(stored.get(stepId), step, STORED_STEP_FIELDS);
    if (diff !== undefined) problems.push(`the store's step ${stepId} is not the log's: ${diff}`);
  }
  for (const stepId of stored.keys())
    if (!replica.steps.has(stepId)) problems.push(`the store has a step ${stepId} the log never made`);
  const approvals = new Map((await store.listRunApprovals(runId)).map((a) => [a.approvalId, a]));
  for (const [id, approval] of replica.approvals) {
    const diff = firstDifference(approvals.get(id), approval);
    if (diff !== undefined) problems.push(`the store's approval ${id} is not the log's: ${diff}`);
  }
  return problems;
}
