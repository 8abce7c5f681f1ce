/**
 * Performing a committed batch's effects. Each is safe to repeat: executions have deterministic names (a second
 * start of one is no new execution), answering a token that is no longer open is no error (the wait moved on), and a
 * timer of the same name is scheduled once. A failure of one stops the rest and fails the batch: the shell drops its
 * copy of the run, and whoever loads it next performs the batch's effects again.
 *
 * Except a step execution's start that the platform throttles or the pacer has no room for: that is no failure of
 * the batch (performing it again would only throttle again, the starts already made taking the tokens first). It is
 * handed back (`deferred`), and the shell tells the run's decider, which tries it again later (rules/start-pacing.ts).
 */

import type { DeferredStart } from '../../engine/run/commands.ts';
import type { Effect } from '../../engine/run/effects.ts';
import { closeAttempt } from '../../engine/step-lifecycle.ts';
import { isConflictError, isTransientPlatformError } from '../../errors.ts';
import { forEachInPool } from '../../pool.ts';
import type { Executions } from '../../ports/executions.ts';
import type { Store } from '../../ports/store.ts';
import type { Timers } from '../../ports/timers.ts';
import type { Admission } from '../admission.ts';
import type { StartPacer } from './start-pacer.ts';

export interface PerformDeps {
  readonly executions: Executions;
  /** Paces step executions' starts (absent: started as they come). */
  readonly pacer?: StartPacer | undefined;
  readonly timers: Timers;
  readonly store: Pick<Store, 'getAttempt' | 'updateAttempt'>;
  readonly clock: () => Date;
  /** The tenants' running slots (absent: nothing is bounded, as in the simulation). */
  readonly admission?: Admission | undefined;
}

/** Step executions' starts not made now, by how often each was deferred before. */
export type DeferredStarts = Map<number, DeferredStart[]>;

/** Starts a step execution; false when the pacer had no room or the platform throttled it past the SDK's retries. */
async function startStep(deps: PerformDeps, effect: Effect & { kind: 'startStep' }): Promise<boolean> {
  if (deps.pacer !== undefined && !(await deps.pacer.take())) return false;
  try {
    await deps.executions.start('step', effect.name, effect.input);
    return true;
  } catch (error) {
    if (isStartThrottle(error)) return false;
    throw error;
  }
}

/** StartExecution's throttle as the SDK surfaces it once its retries are spent (deployed and embedded alike). */
const isStartThrottle = (error: unknown): boolean =>
  isTransientPlatformError(error) && (error as { name?: unknown }).name === 'ThrottlingException';

async function perform(deps: PerformDeps, runId: string, effect: Effect, deferred: DeferredStarts): Promise<void> {
  switch (effect.kind) {
    case 'startStep':
      if (!(await startStep(deps, effect))) {
        const retry = effect.retry ?? 0;
        deferred.set(retry, [...(deferred.get(retry) ?? []), { execution: effect.name, input: effect.input }]);
      }
      return;
    case 'startRun':
      await deps.executions.start('run', effect.name, effect.input);
      return;
    case 'stopStep':
      await deps.executions.stopNamed('step', effect.name, effect.error.code, effect.error.message);
      return;
    case 'answerToken':
      try {
        await deps.executions.sendTaskSuccess(effect.token, effect.output);
      } catch (error) {
        // A token answered, timed out or gone: the wait has moved on (a DecisionTimedOut takes it from there).
        if (!isConflictError(error)) throw error;
      }
      return;
    case 'schedule':
      await deps.timers.schedule(runId, effect.name, effect.at, effect.command);
      return;
    case 'admission':
      if (deps.admission === undefined) return;
      if (effect.action === 'release')
        await deps.admission.release(effect.tenant, { runId, createdAt: effect.createdAt });
      else await deps.admission.reenter(effect.tenant, runId);
      return;
    case 'closeAttempt': {
      // An attempt not yet recorded is closed by its execution, which reads the step after recording it (gate.ts).
      const { stepId, generation, attempt, ending } = effect;
      const record = await deps.store.getAttempt(runId, stepId, { generation, attempt });
      const closed = record && closeAttempt(record, ending, deps.clock().toISOString());
      if (closed) await deps.store.updateAttempt(closed);
      return;
    }
  }
}

/**
 * Performs the effects, a few at a time (a release to a wide fan-out starts many executions); answers the step
 * executions it could not start now, for the decider to defer.
 */
export async function performEffects(
  deps: PerformDeps,
  runId: string,
  effects: readonly Effect[],
): Promise<DeferredStarts> {
  const deferred: DeferredStarts = new Map();
  await forEachInPool(effects, (effect) => perform(deps, runId, effect, deferred));
  return deferred;
}
