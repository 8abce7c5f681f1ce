/**
 * What `GET /runs/{id}/steps/{stepId}` reads, and no more: the step's own item (a group: its executable
 * descendants' items, for its status), its attempts, its approvals (by the step, from the run's approval references)
 * and its events. Lists of the whole run (every step, every approval of every run in the index, the whole audit log)
 * made the answer cost grow with the run and fail whenever any one of those reads did.
 */
import { withPlannedSteps } from '../../engine/run/planned.ts';
import { buildGraph } from '../../plan/graph.ts';
import { stepKind } from '../../plan/schema.ts';
import type { RunEventRecord, RunRecord, StepRecord, Store } from '../../ports/store.ts';
import { approvalView } from '../approvals.ts';
import type { FoundStep } from './plan-lookup.ts';
import type { StepDetailInput } from './step-detail.ts';

/** The earliest time a step (any of its generations) recorded; undefined for one that never started or ended. */
export function firstRecordedTime(record: StepRecord | undefined): number | undefined {
  if (!record) return undefined;
  const times = [record, ...(record.history ?? [])]
    .flatMap((g) => [g.startedAt, g.finishedAt])
    .filter((t): t is string => t !== undefined)
    .map((t) => Date.parse(t))
    .filter(Number.isFinite);
  return times.length === 0 ? undefined : Math.min(...times);
}

/**
 * The step's events: a step that never started or ended has none; otherwise the run's log is read for its events
 * alone. (The log is keyed by the run's decisions, not by time: a step's first recorded time says nothing of where
 * its events sit.)
 */
async function stepEvents(store: Store, runId: string, record: StepRecord | undefined): Promise<RunEventRecord[]> {
  if (firstRecordedTime(record) === undefined || record === undefined) return [];
  return store.listEvents(runId, { stepId: record.stepId });
}

/** Reads what the step detail shows of `found.step` in `run`. */
export async function readStepDetail(store: Store, run: RunRecord, found: FoundStep): Promise<StepDetailInput> {
  const { step } = found;
  const base = { run, revision: found.revision, steps: found.plan.steps, step };
  if (stepKind(step) === 'group') {
    // A group has no item, attempts, approvals or events of its own: its status comes from its descendants.
    const descendants = buildGraph(found.plan.steps).executableDescendants(step.id);
    const stored = descendants.length === 0 ? [] : await store.getSteps(run.runId, descendants);
    const wanted = new Set(descendants);
    const records = withPlannedSteps(run, found.plan, stored).filter((r) => wanted.has(r.stepId));
    return { ...base, records, attempts: [], approvals: [], events: [] };
  }
  const [stored, attempts, approvals] = await Promise.all([
    store.getStep(run.runId, step.id),
    store.listAttempts(run.runId, step.id),
    store.listRunApprovals(run.runId, { stepId: step.id }),
  ]);
  // A step its run's start still implies has no item: its record is the plan's (shared/engine/run/planned.ts).
  const record = stored ?? withPlannedSteps(run, found.plan, []).find((r) => r.stepId === step.id);
  const events = await stepEvents(store, run.runId, stored);
  return {
    ...base,
    records: record ? [record] : [],
    attempts,
    approvals: approvals.map(approvalView),
    events,
  };
}
