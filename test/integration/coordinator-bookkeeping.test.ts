/**
 * The coordinator's cheap paths: the run is looked at as a whole once, when the last step settles (not after every
 * step); a dependent that waits for one step is counted and readied by one write; and a crash between a step's own
 * transition and its follow-ups is repaired by the repeat of the action.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../shared/ports/store.ts';
import {
  createPlannedRun,
  drainSteps,
  type Harness,
  planOf,
  runPlan,
  step,
  useCoordinatorHarness,
} from '../support/coordinator-harness.ts';

const harness = useCoordinatorHarness();

type Calls = Map<string, number>;

/** A harness whose store counts every call and lets a test make one method fail once (a crash at that point). */
function countingHarness(): {
  h: Harness;
  calls: Calls;
  crashOnce: (method: keyof Store, when?: () => boolean) => void;
} {
  const calls: Calls = new Map();
  const crashes = new Map<string, () => boolean>();
  const h = harness(
    {},
    (real) =>
      Object.fromEntries(
        Object.entries(real).map(([name, method]) => [
          name,
          (...args: unknown[]) => {
            calls.set(name, (calls.get(name) ?? 0) + 1);
            const crash = crashes.get(name);
            if (crash?.()) {
              crashes.delete(name);
              return Promise.reject(new Error(`crashed before ${name}`));
            }
            return (method as (...a: unknown[]) => Promise<unknown>)(...args);
          },
        ]),
      ) as unknown as Store,
  );
  return { h, calls, crashOnce: (method, when = () => true) => crashes.set(method, when) };
}

describe('coordinator: completion bookkeeping', () => {
  it('reads the steps of a run as a whole once, when the last one settles, however many steps there are', async () => {
    const { h, calls } = countingHarness();
    const fan = Array.from({ length: 12 }, (_, i) => step(`leaf${i}`, ['root']));
    const { run, answered } = await runPlan(h, planOf([step('root'), ...fan]));
    expect(run?.status).toBe('complete');
    expect(answered).toBe(true);
    // One full check when the last leaf settled and one by runPlan itself to report the steps (FinalizeRun finds
    // the run finished and reads nothing more).
    expect(calls.get('listSteps')).toBe(2);
    expect(calls.get('recordSettled')).toBe(13);
  });

  it('counts a blocked downstream as settled, so a failed run finishes without waiting for its deadline', async () => {
    const { h } = countingHarness();
    h.scripts.set('a', () => ({ error: { code: 'E_BOOM', message: 'boom', retryable: false } }));
    const { run, steps, answered } = await runPlan(
      h,
      planOf([step('a'), step('b', ['a']), step('c', ['b']), step('d')]),
    );
    expect(answered).toBe(true);
    expect(run?.status).toBe('failed');
    expect(run?.terminal?.evidence).toMatchObject({ rootCauses: ['a'] });
    expect([steps.get('b')?.status, steps.get('c')?.status, steps.get('d')?.status]).toEqual([
      'blocked',
      'blocked',
      'succeeded',
    ]);
  });

  it('readies a dependent that waits for one step with the write that counts the edge', async () => {
    const { h, calls } = countingHarness();
    const { runId } = await createPlannedRun(h, planOf([step('a'), step('b', ['a'])]));
    await h.coordinator.startRun({ runId });
    await drainSteps(h);
    expect(calls.get('releaseLastDependency')).toBe(1);
    expect(calls.get('releaseDependency') ?? 0).toBe(0);
    expect(calls.get('getStep') ?? 0).toBe(0);
    expect(h.executions.startsOf('b')).toBe(1);
    expect((await h.store.getRun(runId))?.status).toBe('complete');
  });
});

describe('coordinator: a crash between a transition and its follow-ups', () => {
  it('finishes the run when the repeat of a completion records what the crash lost', async () => {
    const { h, crashOnce } = countingHarness();
    const { runId } = await createPlannedRun(h, planOf([step('a'), step('b')]));
    await h.coordinator.startRun({ runId });
    await h.coordinator.awaitRun({ runId, taskToken: `waiter-${runId}` });
    for (const stepId of ['a', 'b']) {
      await h.coordinator.claimStep({ runId, stepId, generation: 1, executionId: `x-${stepId}` });
      await h.store.putAttempt({
        runId,
        stepId,
        generation: 1,
        attempt: 1,
        target: 'tool:test.echo',
        startedAt: new Date().toISOString(),
        outcome: 'succeeded',
        output: { ok: true },
        evidence: {},
      });
    }
    // `a` succeeds, then its action dies before recording that `a` settled.
    crashOnce('recordSettled');
    await expect(h.coordinator.completeStep({ runId, stepId: 'a', generation: 1, attempt: 1 })).rejects.toThrow(
      /crashed/,
    );
    expect((await h.store.getStep(runId, 'a'))?.status).toBe('succeeded');
    await h.coordinator.completeStep({ runId, stepId: 'b', generation: 1, attempt: 1 });
    expect((await h.store.getRun(runId))?.status).toBe('running');
    // Step Functions repeats the action: the step is already succeeded, its follow-ups are redone.
    expect(await h.coordinator.completeStep({ runId, stepId: 'a', generation: 1, attempt: 1 })).toEqual({
      status: 'succeeded',
    });
    expect((await h.store.getRun(runId))?.status).toBe('complete');
    expect(h.executions.answered.has(`waiter-${runId}`)).toBe(true);
    expect(h.events.of('StepSucceeded', 'a')).toHaveLength(1);
  });

  it('starts a dependent when the repeat finds its edge counted but the dependent not started', async () => {
    const { h } = countingHarness();
    const { runId } = await createPlannedRun(h, planOf([step('a'), step('b', ['a'])]));
    await h.coordinator.startRun({ runId });
    await h.coordinator.claimStep({ runId, stepId: 'a', generation: 1, executionId: 'x-a' });
    await h.store.putAttempt({
      runId,
      stepId: 'a',
      generation: 1,
      attempt: 1,
      target: 'tool:test.echo',
      startedAt: new Date().toISOString(),
      outcome: 'succeeded',
      output: { ok: true },
      evidence: {},
    });
    // The edge is counted (b is ready), then the action dies before starting b's execution.
    const starts = h.executions.start.bind(h.executions);
    let crashed = false;
    h.executions.start = async (machine, name, input) => {
      if (!crashed && input.stepId === 'b') {
        crashed = true;
        throw new Error('crashed before starting b');
      }
      return starts(machine, name, input);
    };
    await expect(h.coordinator.completeStep({ runId, stepId: 'a', generation: 1, attempt: 1 })).rejects.toThrow(
      /crashed/,
    );
    expect(await h.store.getStep(runId, 'b')).toMatchObject({ status: 'ready', remaining: 0, released: ['a'] });
    expect(h.executions.startsOf('b')).toBe(0);
    await h.coordinator.completeStep({ runId, stepId: 'a', generation: 1, attempt: 1 });
    expect(h.executions.startsOf('b')).toBe(1);
  });
});
