/**
 * What changed between two plan revisions, step by step: added, removed, changed (with the fields that differ) and
 * superseded. A replan drops the steps it replaces and marks their records `superseded` (their work is kept for
 * audit, not used); a dropped step whose record is superseded, or a step the newer plan itself marks superseded, is
 * reported as superseded, a dropped step the run never scheduled as removed. Runtime fields (status, result,
 * error) are not definition changes.
 */
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

const RUNTIME_FIELDS: ReadonlySet<string> = new Set(['status', 'result', 'error']);

const ref = (step: PlanStep): StepRef => ({ id: step.id, title: step.title });

/** JSON with object keys sorted, so key order is not a change. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

export function changedFields(before: PlanStep, after: PlanStep): string[] {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].filter((name) => !RUNTIME_FIELDS.has(name) && canonical(a[name]) !== canonical(b[name])).sort();
}

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
