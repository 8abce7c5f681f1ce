/**
 * Every check of a simulated world once it has gone quiet (or hit its horizon), run by run: what was found while it
 * ran (the event-sourcing law per batch, a decider that threw, a dead letter), the store's records against the log's,
 * the chaos invariants, the step invariants, the truth of every answer, and compensation at most once.
 *
 * A simulated run is observed as the chaos suite's invariants read a run (bench/chaos/invariants/types.ts): its
 * status and terminal record, its steps with every attempt the executions made, its audit log (the published events
 * of its committed batches, each at its batch's time) and the conformance ledger. The chaos checks that hold as they
 * are for the decider (a truthful terminal state, a mutating step's effect once per generation) run on it unchanged;
 * nothing after RunFinished but a reopening is checked by the log's order.
 */
import { retryPolicy } from '../../../shared/engine/retry.ts';
import type { RunSettings } from '../../../shared/engine/run/state.ts';
import { checkLedgerOnce } from '../../chaos/invariants/ledger.ts';
import { checkTerminal } from '../../chaos/invariants/terminal.ts';
import type { EventObservation, RunObservation, Violation } from '../../chaos/invariants/types.ts';
import { isMutating } from '../plans.ts';
import type { SimRun } from '../recorder.ts';
import type { LoopEnd } from '../scheduler.ts';
import type { World } from '../world.ts';
import { checkAnswers } from './answers.ts';
import { projectionDifferences } from './event-sourcing.ts';
import { checkCompensation, checkSteps } from './steps.ts';

/** The run's audit log: its batches' published events, in commit order. */
export function auditLog(run: SimRun): EventObservation[] {
  const events: EventObservation[] = [];
  for (const batch of run.batches)
    for (const [i, event] of batch.published.entries()) {
      const { stepId, generation } = event.detail;
      events.push({
        seq: `${String(batch.version).padStart(6, '0')}.${i}`,
        type: event.detailType,
        at: batch.at,
        ...(typeof stepId === 'string' ? { stepId } : {}),
        ...(typeof generation === 'number' ? { generation } : {}),
        detail: event.detail,
      });
    }
  return events;
}

export function observe(run: SimRun, settings: RunSettings, boundMs: number, quiet: boolean): RunObservation {
  const { replica } = run;
  const view = replica.plan;
  const steps = (view?.executable ?? []).map((id) => {
    const planStep = view?.byId.get(id);
    const record = replica.steps.get(id);
    const target = planStep?.target ?? null;
    const attempts = run.attempts
      .filter((a) => a.stepId === id)
      .map((a) => ({ generation: a.generation, attempt: a.attempt, outcome: a.outcome }));
    const person = target?.startsWith('human:') === true;
    return {
      id,
      target,
      dependsOn: planStep?.dependsOn ?? [],
      status: record?.status ?? 'absent',
      generation: record?.generation ?? null,
      attempts,
      mutating: isMutating(target),
      ...(record?.error?.code === undefined ? {} : { error: record.error.code }),
      ...(person || planStep === undefined
        ? {}
        : { maxAttempts: retryPolicy(planStep, settings.retry).maxRetries + 1 }),
    };
  });
  const { status, terminal } = replica.run;
  const ended = ['complete', 'failed', 'cancelled'].includes(status) || (status === 'paused' && terminal !== undefined);
  const finishedAt = [...run.batches].reverse().find((b) => b.events.some((e) => e.type === 'RunFinished'))?.at;
  return {
    runId: run.runId,
    label: `run ${run.index}`,
    status,
    ...(terminal === undefined ? {} : { terminal: { state: terminal.state, reason: terminal.reason } }),
    endedAfterMs: ended && finishedAt !== undefined ? Date.parse(finishedAt) - run.createdAt : null,
    boundMs,
    quiet,
    steps,
    events: auditLog(run),
    ledger: run.ledger,
  };
}

/** The chaos invariants that hold for the decider as they are written. */
export const chaosChecks = (observation: RunObservation): Violation[] => [
  ...checkTerminal(observation),
  ...afterFinish(observation),
  ...checkLedgerOnce(observation),
];

const CLOSING = new Set(['complete', 'failed', 'cancelled']);

/**
 * Nothing after RunFinished but a reopening (and never one after a cancel): the chaos suite's after-finish check
 * (bench/chaos/invariants/after-finish.ts), by the audit log's own order instead of by time, which the simulation
 * knows exactly (events of one batch share their millisecond, a reopening and the end it leads to among them).
 */
function afterFinish(run: RunObservation): Violation[] {
  const found: Violation[] = [];
  const say = (detail: string) => found.push({ runId: run.runId, label: run.label, invariant: 'after-finish', detail });
  let finished: EventObservation | undefined;
  for (const event of run.events) {
    if (event.type === 'RunReopened') {
      if (finished?.detail.state === 'cancelled') say(`RunReopened after RunFinished(cancelled) at ${finished.at}`);
      finished = undefined;
    } else if (finished !== undefined)
      say(
        `${event.type}${event.stepId === undefined ? '' : ` ${event.stepId}#${event.generation ?? '?'}`} at ${event.at} after RunFinished(${String(finished.detail.state)}) at ${finished.at}`,
      );
    if (event.type === 'RunFinished' && CLOSING.has(String(event.detail.state))) finished = event;
  }
  return found;
}

export interface SimViolation {
  readonly seed: number;
  readonly runId: string;
  readonly invariant: string;
  readonly detail: string;
}

export async function checkWorld(world: World, end: LoopEnd, boundMs: number): Promise<SimViolation[]> {
  const found: SimViolation[] = [];
  for (const run of world.recorder.runs.values()) {
    const add = (invariant: string, detail: string) =>
      found.push({ seed: world.seed, runId: run.runId, invariant, detail });
    if (end !== 'quiet') add('liveness', `the world did not go quiet (${end}) after ${world.sched.steps} tasks`);
    for (const problem of run.problems) add(problem.invariant, problem.detail);
    if (!run.problems.some((p) => p.invariant === 'event-sourcing'))
      for (const detail of await projectionDifferences(world.store, run.replica)) add('projection', detail);
    const observation = observe(run, world.settings, boundMs, end === 'quiet');
    for (const v of chaosChecks(observation)) add(v.invariant, v.detail);
    for (const v of checkSteps(observation, run.replica.plan?.byId ?? new Map())) add(v.invariant, v.detail);
    for (const v of checkAnswers(run)) add(v.invariant, v.detail);
    for (const v of checkCompensation(run)) add(v.invariant, v.detail);
  }
  return found;
}
