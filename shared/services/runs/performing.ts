/**
 * Performing a committed batch's effects. Each is safe to repeat: executions have deterministic names (a second
 * start of one is no new execution), answering a token that is no longer open is no error (the wait moved on), and a
 * timer of the same name is scheduled once. A failure of one stops the rest and fails the batch: the shell drops its
 * copy of the run, and whoever loads it next performs the batch's effects again.
 */
import type { Effect } from '../../engine/run/effects.ts';
import { closeAttempt } from '../../engine/step-lifecycle.ts';
import { isConflictError } from '../../errors.ts';
import { forEachInPool } from '../../pool.ts';
import type { Executions } from '../../ports/executions.ts';
import type { Store } from '../../ports/store.ts';
import type { Timers } from '../../ports/timers.ts';
import type { Admission } from '../admission.ts';

export interface PerformDeps {
  readonly executions: Executions;
  readonly timers: Timers;
  readonly store: Pick<Store, 'getAttempt' | 'updateAttempt'>;
  readonly clock: () => Date;
  /** The tenants' running slots (absent: nothing is bounded, as in the simulation). */
  readonly admission?: Admission | undefined;
}

async function perform(deps: PerformDeps, runId: string, effect: Effect): Promise<void> {
  switch (effect.kind) {
    case 'startStep':
      await deps.executions.start('step', effect.name, effect.input);
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

/** Performs the effects, a few at a time (a release to a wide fan-out starts many executions). */
export async function performEffects(deps: PerformDeps, runId: string, effects: readonly Effect[]): Promise<void> {
  await forEachInPool(effects, (effect) => perform(deps, runId, effect));
}
