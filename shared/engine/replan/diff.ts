/**
 * The difference between two plan revisions, step by step (groups included), for `GET /runs/{id}/plan/diff` and
 * the console. Lifecycle fields (status, result, error) say how a run went, not what the plan is, so they count as
 * a change only when asked.
 */
import type { Plan } from '../../plan/schema.ts';
import { changedFields, stepsById } from './step-definition.ts';

export interface StepChange {
  readonly id: string;
  /** The top-level step fields whose values differ, sorted. */
  readonly fields: string[];
}

export interface PlanDiff {
  /** In `b`, not in `a` (b's order). */
  readonly added: string[];
  /** In `a`, not in `b` (a's order). */
  readonly removed: string[];
  /** In both, with different fields (b's order). */
  readonly changed: StepChange[];
  /** In both, the same (b's order). */
  readonly unchanged: string[];
}

export function diffPlans(a: Plan, b: Plan, options: { lifecycle?: boolean } = {}): PlanDiff {
  const before = stepsById(a);
  const after = stepsById(b);
  const added: string[] = [];
  const changed: StepChange[] = [];
  const unchanged: string[] = [];
  for (const [id, step] of after) {
    const old = before.get(id);
    if (old === undefined) {
      added.push(id);
      continue;
    }
    const fields = changedFields(old, step, options);
    if (fields.length > 0) changed.push({ id, fields });
    else unchanged.push(id);
  }
  const removed = [...before.keys()].filter((id) => !after.has(id));
  return { added, removed, changed, unchanged };
}
