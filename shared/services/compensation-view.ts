/**
 * What the compensation decision (engine/compensation.ts) is given, read from a run, its plan and its step records:
 * shared by whoever asks it (the run's end, the compensation driver).
 */
import { type CompensationInput, compensationMembers } from '../engine/compensation.ts';
import type { RunRecord, StepRecord } from '../ports/store.ts';
import type { Interpreter, LoadedPlan } from './interpreter.ts';

// Members are a function of the plan revision (immutable) and the catalog: computed once per loaded plan.
const members = new WeakMap<LoadedPlan, CompensationInput['members']>();

export function compensationInput(
  ctx: Interpreter,
  run: Pick<RunRecord, 'cancelCompensation'>,
  loaded: LoadedPlan,
  steps: ReadonlyMap<string, StepRecord>,
): CompensationInput {
  let known = members.get(loaded);
  if (!known) {
    known = compensationMembers(loaded.plan.steps, new Set(loaded.graph.executableIds()), ctx.deps.catalog);
    members.set(loaded, known);
  }
  const views = new Map(
    [...steps].map(([id, s]) => [
      id,
      {
        status: s.status,
        finishedAt: s.finishedAt,
        error: s.status === 'compensation_failed' ? (s.compensation?.error ?? null) : s.error,
      },
    ]),
  );
  return { members: known, steps: views, cancelAll: run.cancelCompensation === true };
}
