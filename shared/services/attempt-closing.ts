/**
 * No attempt stays `running` once its step generation has ended. Only a gate's attempt is recorded before it ends
 * (the input the approver sees). The run's decider closes it with its step (a `closeAttempt` effect the shell
 * performs, runs/performing.ts); an attempt recorded after its step closed was not there to be closed, so the gate
 * that recorded it reads the step again and closes it here (step/gate.ts). Repeatable: an attempt already closed is
 * left as it is.
 */
import { type AttemptEnding, closeAttempt } from '../engine/step-lifecycle.ts';
import type { AttemptRef, StepRecord } from '../ports/store.ts';
import type { Interpreter } from './interpreter.ts';

/** Closes the step's attempt `ref` if it is still recorded `running`, as the pure `closeAttempt` says. */
export async function closeAttemptOf(
  ctx: Interpreter,
  step: Pick<StepRecord, 'runId' | 'stepId'>,
  ref: AttemptRef,
  ending: AttemptEnding,
): Promise<void> {
  const { store } = ctx.deps;
  const record = await store.getAttempt(step.runId, step.stepId, ref);
  const closed = record && closeAttempt(record, ending, ctx.now());
  if (closed) await store.updateAttempt(closed);
}
