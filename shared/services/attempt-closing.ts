/**
 * No attempt stays `running` in a finished run. Only a gate's attempt is recorded before it ends (the input the
 * approver sees); every ending of its step closes it (`closeAttempt`), but a closer whose write was throttled or whose
 * answer was lost, or that looked at the step before it was claimed, can leave it open. Whoever ends the run sweeps
 * the generations that ended in flight (`attemptsToClose`) before writing the ending, repeatably: an attempt already
 * closed is left as it is.
 */
import { type AttemptEnding, attemptsToClose, closeAttempt } from '../engine/step-lifecycle.ts';
import { forEachInPool } from '../pool.ts';
import type { AttemptRef, StepRecord } from '../ports/store.ts';
import type { Interpreter } from './interpreter.ts';
import { writeAgainWhileRetryable } from './write-again.ts';

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

/**
 * Closes what `attemptsToClose` names for each step: one read per generation that ended in flight, none for a step
 * that finished on its own (a run that ran to its end without cancellations or invalidations reads nothing here).
 * A failure that may pass is tried again in place (each close is repeatable): the run's ending waits for the sweep,
 * and not every caller that settles a run is itself repeated.
 */
export async function closeLeftAttempts(ctx: Interpreter, steps: readonly StepRecord[]): Promise<void> {
  const closes = steps.flatMap((step) => attemptsToClose(step).map((close) => ({ step, ...close })));
  await forEachInPool(closes, async ({ step, ref, ending }) => {
    await writeAgainWhileRetryable(() => closeAttemptOf(ctx, step, ref, ending));
  });
}
