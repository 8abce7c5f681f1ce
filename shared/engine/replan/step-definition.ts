/**
 * A step's definition versus its run: replanning compares what a step is (every field but status, result and
 * error) and reads how it went (status, output, error) from the step records, never from the plan document, whose
 * lifecycle fields are only a snapshot.
 */
import type { Plan, PlanStep, StepError, StepStatus } from '../../plan/schema.ts';

/** Fields that describe a run of a step, not the step: a replan may change them on any step. */
export const LIFECYCLE_FIELDS: ReadonlySet<string> = new Set(['status', 'result', 'error']);

/** How a step's current generation went, as its record says (a StepRecord fits). */
export interface StepStateView {
  readonly status: StepStatus;
  readonly output?: unknown;
  readonly error?: StepError | null | undefined;
}

/** Step id → its status, or its record. A step without an entry counts as pending. */
export type StepStates = ReadonlyMap<string, StepStatus | StepStateView>;

export const stateOf = (states: StepStates, id: string): StepStateView | undefined => {
  const entry = states.get(id);
  return typeof entry === 'string' ? { status: entry } : entry;
};

export const statusOf = (states: StepStates, id: string): StepStatus | undefined => stateOf(states, id)?.status;

/** Finished for good in a way a replan keeps: the step's output (or its skip) stands. */
export const isFinishedStatus = (status: StepStatus | undefined): boolean =>
  status === 'succeeded' || status === 'skipped';

/** The states of a run's step records, by step id. */
export function stepStates(records: Iterable<StepStateView & { readonly stepId: string }>): Map<string, StepStateView> {
  const out = new Map<string, StepStateView>();
  for (const record of records) out.set(record.stepId, record);
  return out;
}

/** The step without status, result and error. */
export function withoutLifecycle(step: PlanStep): PlanStep {
  const { status: _status, result: _result, error: _error, ...definition } = step;
  return definition;
}

/** The plan as a definition: no step carries status, result or error (what validateGenerated accepts). */
export const stripLifecycle = (plan: Plan): Plan => ({ ...plan, steps: plan.steps.map(withoutLifecycle) });

/** The plan as a fresh planner writes it: every step pending, without result or error. */
export const pendingPlan = (plan: Plan): Plan => ({
  ...plan,
  steps: plan.steps.map((step) => ({ ...withoutLifecycle(step), status: 'pending', result: null, error: null })),
});

/** JSON with object keys sorted and undefined members left out, so key order and absent-vs-undefined are no change. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The fields whose values differ between two versions of a step, sorted; lifecycle fields only when asked. */
export function changedFields(before: PlanStep, after: PlanStep, options: { lifecycle?: boolean } = {}): string[] {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names]
    .filter((name) => options.lifecycle === true || !LIFECYCLE_FIELDS.has(name))
    .filter((name) => canonicalJson(a[name]) !== canonicalJson(b[name]))
    .sort();
}

export const sameDefinition = (before: PlanStep, after: PlanStep): boolean => changedFields(before, after).length === 0;

/** Steps by id; the first of duplicate ids wins, as in the plan graph. */
export function stepsById(plan: Pick<Plan, 'steps'>): Map<string, PlanStep> {
  const out = new Map<string, PlanStep>();
  for (const step of plan.steps) if (!out.has(step.id)) out.set(step.id, step);
  return out;
}

/** Clips to `max` characters with an ellipsis, whitespace collapsed; never splits a surrogate pair. */
export function clipText(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let cut = flat.slice(0, Math.max(0, max - 1));
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut}…`;
}
