/**
 * Loading a run for its decider: the run's records (run, steps, approvals) as the store holds them (with the steps
 * its plan still implies, and what each unstarted step waits for derived from its upstream steps' statuses, not read:
 * shared/engine/run/planned.ts), its current plan revision, and its version (its log's last batch). A batch
 * committed by a writer that died before it had written
 * the batch's records or performed its effects is finished first: only the last batch can be unfinished, since a
 * writer finishes each batch before it commits the next.
 */
import { withPlannedSteps } from '../../engine/run/planned.ts';
import type { RunSettings, TargetFacts } from '../../engine/run/state.ts';
import { type DraftState, draftOf, planView } from '../../engine/run/state.ts';
import type { Plan } from '../../plan/schema.ts';
import type { CommittedBatch, RunLog } from '../../ports/run-log.ts';
import type { Store } from '../../ports/store.ts';

export interface LoadDeps {
  readonly store: Pick<Store, 'getRun' | 'listSteps' | 'listRunApprovals' | 'getPlanRevision'>;
  readonly runLog: RunLog;
  readonly settings: RunSettings;
  readonly targets: (target: string) => TargetFacts | undefined;
}

export interface LoadedRun {
  readonly draft: DraftState;
  /** The batch the run's log ends with, to be finished (its records and effects) before anything else. */
  readonly last?: CommittedBatch | undefined;
}

/** The run's decider state; undefined for a run the store does not have. */
export async function loadRun(deps: LoadDeps, runId: string): Promise<LoadedRun | undefined> {
  const last = await deps.runLog.last(runId);
  if (last !== undefined) await deps.runLog.project(last);
  const run = await deps.store.getRun(runId);
  if (run === undefined) return undefined;
  const [steps, approvals] = await Promise.all([deps.store.listSteps(runId), deps.store.listRunApprovals(runId)]);
  const viewOf = (plan: Plan) => planView(plan, deps.targets);
  const revision = run.revision >= 1 ? await deps.store.getPlanRevision(runId, run.revision) : undefined;
  const plan = revision === undefined ? undefined : viewOf(revision.plan);
  const draft = draftOf({
    version: last?.version ?? 0,
    run,
    steps: new Map(withPlannedSteps(run, plan, steps).map((s) => [s.stepId, s])),
    approvals: new Map(approvals.map((a) => [a.approvalId, a])),
    plan,
    settings: deps.settings,
    viewOf,
  });
  return { draft, last };
}
