/**
 * What an unstarted step waits for: its upstream steps, and which of them let it go (succeeded or skipped, or failed
 * under `onFailure: continue`). The decider starts a step when none is left (rules/flow.ts); the records say which
 * (`released`, `remaining`). Those two are derived, never the reason for a write: see `recountDependents` in
 * evolve.ts.
 */
import type { StepStatus } from '../../plan/schema.ts';
import type { StepRecord } from '../../ports/records/steps.ts';
import { RELEASING_STEP_STATUSES } from '../statuses.ts';
import type { DraftState, PlanView } from './state.ts';

/** Whether an upstream step in `status` lets a dependent go on (a failure only under `onFailure: continue`). */
export function letsDependentsGo(draft: Pick<DraftState, 'plan'>, stepId: string, status: StepStatus): boolean {
  if (RELEASING_STEP_STATUSES.has(status)) return true;
  return status === 'failed' && draft.plan?.byId.get(stepId)?.onFailure === 'continue';
}

/** A step's generation as its upstream steps stand now: what it waits for, and `ready` when that is nothing. */
export function generationOf(
  draft: Pick<DraftState, 'plan' | 'steps'>,
  stepId: string,
): Pick<StepRecord, 'upstream' | 'released' | 'remaining' | 'status'> {
  const upstream = draft.plan?.upstream(stepId) ?? [];
  const released = upstream.filter((id) => {
    const up = draft.steps.get(id);
    return up !== undefined && letsDependentsGo(draft, id, up.status);
  });
  const remaining = upstream.length - released.length;
  return { upstream, released, remaining, status: remaining === 0 ? 'ready' : 'pending' };
}

/** Sets an unstarted step's `released` and `remaining` to what its upstream steps' statuses say (else leaves it). */
export function recountOne(draft: Pick<DraftState, 'plan' | 'steps'>, stepId: string): void {
  const step = draft.steps.get(stepId);
  if (step === undefined || (step.status !== 'pending' && step.status !== 'ready')) return;
  const { released, remaining } = generationOf(draft, stepId);
  if (remaining === step.remaining && sameIds(released, step.released)) return;
  draft.steps.set(stepId, { ...step, released, remaining });
}

const sameIds = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((id, i) => id === b[i]);

/**
 * What every unstarted step waits for, from its upstream steps' statuses as they stand (not from what its record
 * was last written with: a release does not write its dependents, see `recountDependents`). Changes `draft` in
 * place; a loaded run and every reader that shows a step's releases go through it.
 */
export function deriveReleases(draft: Pick<DraftState, 'plan' | 'steps'>): void {
  for (const id of draft.steps.keys()) recountOne(draft, id);
}

/** A run's step records with what each unstarted one waits for derived (`deriveReleases`), in the same order. */
export function withReleases(plan: PlanView | undefined, records: readonly StepRecord[]): StepRecord[] {
  if (plan === undefined) return [...records];
  const steps = new Map(records.map((r) => [r.stepId, r]));
  deriveReleases({ plan, steps });
  return records.map((r) => steps.get(r.stepId) ?? r);
}
