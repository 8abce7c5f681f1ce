/**
 * Finding a step's definition in a run's plan revisions: the current revision first, then older ones newest first,
 * because a replan may have moved on since a record (an attempt, an approval) was written.
 */
import type { Plan, PlanStep } from '../../plan/schema.ts';
import type { RunRecord, Store } from '../../ports/store.ts';
import { notFound } from '../errors.ts';

export interface FoundStep {
  readonly step: PlanStep;
  readonly revision: number;
  readonly plan: Plan;
}

export async function requireRun(store: Store, runId: string): Promise<RunRecord> {
  const run = await store.getRun(runId);
  if (!run) throw notFound(`run ${runId} not found`);
  return run;
}

export async function currentPlan(store: Store, run: RunRecord): Promise<Plan | undefined> {
  if (run.revision < 1) return undefined;
  return (await store.getPlanRevision(run.runId, run.revision))?.plan;
}

export async function findPlanStep(store: Store, run: RunRecord, stepId: string): Promise<FoundStep | undefined> {
  if (run.revision < 1) return undefined;
  const current = await store.getPlanRevision(run.runId, run.revision);
  const inCurrent = current?.plan.steps.find((s) => s.id === stepId);
  if (current && inCurrent) return { step: inCurrent, revision: run.revision, plan: current.plan };
  const older = (await store.listPlanRevisions(run.runId))
    .map((r) => r.revision)
    .filter((r) => r !== run.revision && r >= 1)
    .sort((a, b) => b - a);
  for (const revision of older) {
    const stored = await store.getPlanRevision(run.runId, revision);
    const step = stored?.plan.steps.find((s) => s.id === stepId);
    if (stored && step) return { step, revision, plan: stored.plan };
  }
  return undefined;
}
