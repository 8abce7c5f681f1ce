/**
 * What changed between two plan revisions, step by step: added, removed, changed (with the fields that differ) and
 * superseded. A replan drops the steps it replaces and marks their records `superseded` (their work is kept for
 * audit, not used); a dropped step whose record is superseded, or a step the newer plan itself marks superseded, is
 * reported as superseded, a dropped step the run never scheduled as removed. Fields are compared as the replanner
 * compares them (engine/replan/step-definition.ts): runtime fields (status, result, error) are not definition changes.
 */
import { changedFields } from '../../engine/replan/step-definition.ts';
import type { Plan, PlanStep } from '../../plan/schema.ts';

export interface StepRef {
  readonly id: string;
  readonly title: string;
}

export interface ChangedStep extends StepRef {
  /** The definition fields whose values differ, sorted. */
  readonly fields: readonly string[];
}

export interface PlanDiff {
  readonly added: readonly StepRef[];
  readonly removed: readonly StepRef[];
  readonly changed: readonly ChangedStep[];
  readonly superseded: readonly StepRef[];
}

export interface DiffCounts {
  readonly added: number;
  readonly removed: number;
  readonly changed: number;
  readonly superseded: number;
}

export { changedFields };

const ref = (step: PlanStep): StepRef => ({ id: step.id, title: step.title });

const isSuperseded = (step: PlanStep | undefined): boolean => step?.status === 'superseded';

/**
 * The diff from `before` (undefined: nothing, so every live step is added) to `after`, in plan order.
 * `supersededRecords`: ids of the run's steps whose records are `superseded`.
 */
export function diffPlans(
  before: Plan | undefined,
  after: Plan,
  supersededRecords: ReadonlySet<string> = new Set(),
): PlanDiff {
  const old = new Map((before?.steps ?? []).map((s) => [s.id, s]));
  const current = new Set(after.steps.map((s) => s.id));
  const added: StepRef[] = [];
  const changed: ChangedStep[] = [];
  const superseded: StepRef[] = [];
  for (const step of after.steps) {
    const previous = old.get(step.id);
    if (isSuperseded(step)) {
      if (!isSuperseded(previous)) superseded.push(ref(step));
      continue;
    }
    if (previous === undefined || isSuperseded(previous)) {
      added.push(ref(step));
      continue;
    }
    const fields = changedFields(previous, step);
    if (fields.length > 0) changed.push({ ...ref(step), fields });
  }
  const removed: StepRef[] = [];
  for (const step of before?.steps ?? []) {
    if (current.has(step.id) || isSuperseded(step)) continue;
    (supersededRecords.has(step.id) ? superseded : removed).push(ref(step));
  }
  return { added, removed, changed, superseded };
}

export const countDiff = (diff: PlanDiff): DiffCounts => ({
  added: diff.added.length,
  removed: diff.removed.length,
  changed: diff.changed.length,
  superseded: diff.superseded.length,
});
