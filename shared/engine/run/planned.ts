/**
 * The records a run's plan implies. A step of revision 1 that nothing has changed since the run started is not
 * written at the start: its record is what the plan says (generation 1, waiting for its upstream steps, its `[plan]`
 * trace entry, stamped with the run's `startedAt`), so starting a run costs what it starts, not what it plans, and a
 * step's item is first written when the decider first changes it. Every reader of a run's steps (its decider when it
 * loads the run, the API, the replanner) takes the stored records and adds the implied ones.
 *
 * Only revision 1 implies: the batch that makes a later revision current writes every step still implied (the
 * shell, shared/services/runs/shell.ts), so a run's readers need no earlier revision than the current one.
 */
import type { Plan } from '../../plan/schema.ts';
import type { RunRecord } from '../../ports/records/runs.ts';
import type { StepRecord, TraceEntry } from '../../ports/records/steps.ts';
import { traceEntry } from '../trace.ts';
import { withReleases } from './releases.ts';
import { type PlanView, planView } from './state.ts';

/** The `[plan]` entry a step's first generation starts with: what it does, and why the plan has it. */
export function planTrace(view: PlanView | undefined, stepId: string, at: string): TraceEntry[] {
  const plan = view?.plan;
  if (plan === undefined) return [];
  const planned = view?.byId.get(stepId);
  const what = `${planned?.title ?? stepId} → ${planned?.target ?? '?'}`;
  const revision = plan.revision > 1 ? ` (revision ${plan.revision})` : '';
  return [traceEntry('plan', plan.rationale ? `${what}${revision}. Why: ${plan.rationale}` : `${what}${revision}`, at)];
}

/** A step's record as its run's start made it: nothing upstream has let it go yet. */
export function plannedRecord(view: PlanView, runId: string, stepId: string, at: string): StepRecord {
  const upstream = view.upstream(stepId);
  return {
    runId,
    stepId,
    generation: 1,
    upstream,
    released: [],
    remaining: upstream.length,
    status: upstream.length === 0 ? 'ready' : 'pending',
    attempts: 0,
    trace: planTrace(view, stepId, at),
    updatedAt: at,
  };
}

/**
 * Whether a step's record is still the one its run's start implied (so it need not be written). What it waits for
 * does not count: a release changes only that of its dependents, and is not written (releases.ts).
 */
export function isImplied(run: Pick<RunRecord, 'startedAt'>, step: StepRecord): boolean {
  return (
    step.updatedAt === run.startedAt &&
    step.generation === 1 &&
    step.attempts === 0 &&
    (step.status === 'pending' || step.status === 'ready')
  );
}

/**
 * A run's step records as every reader reads them: the stored ones and those its plan (revision 1, the run's start)
 * still implies, each unstarted one with what it waits for derived from its upstream steps' statuses (a stored
 * `released`, written by an older cairn or before the last release, is not read). `plan` is the run's current
 * revision; other revisions imply nothing.
 */
export function withPlannedSteps(
  run: Pick<RunRecord, 'runId' | 'revision' | 'startedAt'>,
  plan: Plan | PlanView | undefined,
  stored: readonly StepRecord[],
): StepRecord[] {
  if (plan === undefined) return [...stored];
  const view = 'graph' in plan ? plan : planView(plan);
  return withReleases(view, [...stored, ...impliedSteps(run, view, stored)]);
}

/**
 * The records of the steps its run's start still implies, beside `stored`, as they were written nowhere: what they
 * wait for not derived (a reader that shows no releases, a run's page, takes them so).
 */
export function impliedSteps(
  run: Pick<RunRecord, 'runId' | 'revision' | 'startedAt'>,
  view: PlanView,
  stored: readonly StepRecord[],
): StepRecord[] {
  if (run.revision !== 1 || run.startedAt === undefined || view.plan.revision !== 1) return [];
  const known = new Set(stored.map((s) => s.stepId));
  const at = run.startedAt;
  return view.executable.filter((id) => !known.has(id)).map((id) => plannedRecord(view, run.runId, id, at));
}
