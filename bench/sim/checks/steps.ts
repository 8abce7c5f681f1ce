/**
 * The step invariants. The chaos suite's (bench/chaos/invariants/step-once.ts, downstream.ts), with the plan's
 * failure policies read in: a step that failed under `onFailure: continue` lets its dependents go (they may succeed,
 * and the run may complete with it failed), which the chaos plans never had.
 * - No step lost: a finished run has no open step; a complete run has every step succeeded, skipped or accepted as
 *   failed; a blocked step has an upstream step that did not let it go.
 * - No step run twice: within a generation, attempt numbers are distinct and within the retry policy, at most one
 *   succeeded, and the audit log announces StepStarted and StepSucceeded at most once.
 * - Nothing downstream of a failure: a succeeded step has no stopping (failed, not accepted; or blocked) step
 *   upstream of it, and every direct upstream step let it go (or has been compensated since).
 * - A mutating step's effect undone at most once: per step and generation, at most one compensation succeeded (by
 *   its execution, or as the log says), and only a mutating step that had succeeded is compensated at all. A run
 *   that ended cancelled by a compensating cancel left no succeeded mutating step of a segment undone.
 */
import type { PlanStep } from '../../../shared/plan/schema.ts';
import type { RunObservation, StepObservation } from '../../chaos/invariants/types.ts';
import { isMutating } from '../plans.ts';
import type { SimRun } from '../recorder.ts';

export interface StepViolation {
  readonly invariant: 'step-once' | 'downstream-of-failure';
  readonly detail: string;
}

const FINAL = new Set(['complete', 'failed', 'cancelled']);
const OPEN = new Set(['pending', 'ready', 'running', 'retrying', 'awaiting_approval']);

export function checkSteps(run: RunObservation, plan: ReadonlyMap<string, PlanStep>): StepViolation[] {
  const found: StepViolation[] = [];
  const once = (detail: string) => found.push({ invariant: 'step-once', detail });
  const byId = new Map(run.steps.map((s) => [s.id, s]));
  const accepted = (s: StepObservation | undefined) =>
    s?.status === 'failed' && plan.get(s.id)?.onFailure === 'continue';
  const letsGo = (s: StepObservation | undefined) =>
    s !== undefined && (s.status === 'succeeded' || s.status === 'skipped' || accepted(s));
  const stopping = (s: StepObservation | undefined) =>
    s !== undefined && (s.status === 'blocked' || (s.status === 'failed' && !accepted(s)));

  for (const step of run.steps) {
    if (FINAL.has(run.status) && OPEN.has(step.status)) once(`${step.id} lost: ${step.status} in a ${run.status} run`);
    if (run.status === 'complete' && !letsGo(step)) once(`${step.id} is ${step.status} in a complete run`);
    if (step.status === 'blocked' && step.dependsOn.every((id) => letsGo(byId.get(id))))
      once(`${step.id} blocked, but every upstream step let it go`);
    const numbers = new Map<number, number[]>();
    const wins = new Map<number, number>();
    for (const a of step.attempts) {
      numbers.set(a.generation, [...(numbers.get(a.generation) ?? []), a.attempt]);
      if (a.outcome === 'succeeded') wins.set(a.generation, (wins.get(a.generation) ?? 0) + 1);
    }
    for (const [generation, list] of numbers) {
      const distinct = new Set(list);
      if (distinct.size !== list.length)
        once(`${step.id}#${generation} made attempt numbers twice: ${list.join(', ')}`);
      if (step.maxAttempts !== undefined && distinct.size > step.maxAttempts)
        once(`${step.id}#${generation} made ${distinct.size} attempts; its policy allows ${step.maxAttempts}`);
      if ((wins.get(generation) ?? 0) > 1) once(`${step.id}#${generation} has ${wins.get(generation)} successes`);
    }
  }
  const announced = new Map<string, number>();
  for (const e of run.events)
    if ((e.type === 'StepStarted' || e.type === 'StepSucceeded') && e.stepId !== undefined) {
      const key = `${e.type} ${e.stepId}#${e.generation ?? 0}`;
      announced.set(key, (announced.get(key) ?? 0) + 1);
    }
  for (const [key, n] of announced) if (n > 1) once(`${key} announced ${n} times`);

  const upstreamOf = (id: string): Set<string> => {
    const seen = new Set<string>();
    const stack = [...(byId.get(id)?.dependsOn ?? [])];
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...(byId.get(next)?.dependsOn ?? []));
    }
    return seen;
  };
  for (const step of run.steps) {
    if (step.status !== 'succeeded') continue;
    const stopped = [...upstreamOf(step.id)].filter((id) => stopping(byId.get(id)));
    if (stopped.length > 0)
      found.push({
        invariant: 'downstream-of-failure',
        detail: `${step.id} succeeded downstream of ${stopped.map((id) => `${id}=${byId.get(id)?.status}`).join(', ')}`,
      });
    // An upstream step undone since (a saga) had succeeded when it let this one go.
    const holding = step.dependsOn.filter(
      (id) => !letsGo(byId.get(id)) && !byId.get(id)?.status.startsWith('compensat'),
    );
    if (holding.length > 0)
      found.push({
        invariant: 'downstream-of-failure',
        detail: `${step.id} succeeded though ${holding.map((id) => `${id}=${byId.get(id)?.status}`).join(', ')} never let it go`,
      });
  }
  return found;
}

export interface CompensationViolation {
  readonly invariant: 'compensation';
  readonly detail: string;
}

export function checkCompensation(run: SimRun): CompensationViolation[] {
  const found: CompensationViolation[] = [];
  const say = (detail: string) => found.push({ invariant: 'compensation', detail });
  const count = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  const undone = new Map<string, number>();
  for (const undo of run.undos) count(undone, `${undo.stepId}#${undo.generation}`);
  const ended = new Map<string, number>();
  const succeeded = new Set<string>();
  const view = run.replica.plan;
  for (const batch of run.batches)
    for (const event of batch.events) {
      if (event.type === 'StepSucceeded') succeeded.add(`${event.stepId}#${event.generation}`);
      if (event.type === 'CompensationEnded' && event.state === 'compensated' && event.resolution === undefined)
        count(ended, `${event.stepId}#${event.generation}`);
      if (event.type === 'CompensationStarted') {
        const key = `${event.stepId}#${event.generation}`;
        if (!isMutating(view?.byId.get(event.stepId)?.target ?? null)) say(`${key} is compensated but never mutated`);
        if (!succeeded.has(key)) say(`${key} is compensated but never succeeded`);
      }
    }
  for (const [key, n] of undone) if (n > 1) say(`${key} was undone ${n} times`);
  for (const [key, n] of ended) if (n > 1) say(`${key} ended compensated ${n} times`);
  const { status, cancelCompensation } = run.replica.run;
  if (status === 'cancelled' && cancelCompensation === true)
    for (const [id, step] of run.replica.steps) {
      const planStep = view?.byId.get(id);
      if (planStep?.segment !== undefined && isMutating(planStep.target) && step.status === 'succeeded')
        say(`${id}#${step.generation} is left succeeded in a run cancelled with compensation`);
    }
  return found;
}
