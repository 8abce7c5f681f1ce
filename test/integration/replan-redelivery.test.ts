/**
 * Applying a plan revision is repeatable: once revision n+1 is current, a throw while the step records are brought in
 * line with it (a throttled `startGeneration`, an `updateRun` that landed and lost its answer) is not a decline; it
 * propagates, and the redelivery finishes the revision from what the run recorded (its ReplanRecord's application).
 * Before, the throw was recorded as a decline (E_REPLAN_FAILED) while the revision stayed current with its steps
 * pending and nothing to move them: the chaos suite's "stuck `running` with no open step" (seed 5).
 *
 * A StepFailed the replanner took (`handledFailures`) but could not answer, because a store call on the way was
 * throttled, is answered by its redelivery: the mark is taken back, so the repeat is not told "duplicate". Before,
 * the run waited for a replan that never came (awaitsReplan) with nothing open left to settle it: the chaos suite's
 * "stuck: the stack went quiet with the run open" (seed 3, a rejected gate's failure).
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { createHtnPlanModel } from '../../shared/planner/htn/model.ts';
import type { Store } from '../../shared/ports/store.ts';
import { READ_TRIES } from '../../shared/services/read-again.ts';
import { createReplanner, PLATFORM_TRIES } from '../../shared/services/replanner.ts';
import { plan, step, useTestStack, waitForRun } from '../support/local-stack.ts';
import { createReplanPack, PROVIDERS } from '../support/replan-pack.ts';
import { injectedThrottle, interceptStore, secondProcessDeps } from '../support/second-process.ts';

// The stack's own replanner is off (maxReplans 0): the one under test is the second process below.
const stack = useTestStack({ extraCapabilities: createReplanPack(), limits: { maxReplans: 0 } });

function timeout(): Error {
  const error = new Error('injected: the write landed, its answer was lost');
  error.name = 'TimeoutError';
  return error;
}

/**
 * The stack's store whose first `times` calls of `method` for `runId` fail as DynamoDB's do once the SDK gave up:
 * before the call (`before`, nothing written) or after it landed (`after`, the answer lost).
 */
function storeFailing(
  runId: string,
  method: keyof Store,
  when: 'before' | 'after',
  error: () => Error,
  times = 1,
): Store {
  let fired = 0;
  return interceptStore(stack.store, [method], async (call, [id]) => {
    if (fired >= times || id !== runId) return call();
    fired += 1;
    if (when === 'after') await call();
    throw error();
  });
}

/** Every read of the run throttled for as long as the replanner tries in one invocation (each read tried again). */
const storeThrottlingReads = (runId: string, times = PLATFORM_TRIES * READ_TRIES): Store =>
  storeFailing(runId, 'getRun', 'before', injectedThrottle, times);

const deps = (store: Store) => secondProcessDeps(stack, store, { maxReplans: 3 });

describe('replanner.onStepFailed', () => {
  it('answers the redelivery of a failure whose first handling was throttled after it was taken', async () => {
    const runId = await runWithFailedStep('replan after a throttled read');
    const replanner = createReplanner({ ...deps(storeThrottlingReads(runId)), model: createHtnPlanModel() });
    const ref = { runId, stepId: 'B', generation: 1 };

    await expect(replanner.onStepFailed(ref)).rejects.toThrow(/Rate exceeded/);
    const redelivered = await replanner.onStepFailed(ref);

    expect(redelivered).toMatchObject({ outcome: 'revised', revision: 2 });
    await stack.request('POST', `/runs/${runId}/cancel`);
  });

  it('answers in the first invocation when reads of the run are throttled for a while', async () => {
    const runId = await runWithFailedStep('replan through throttled reads');
    // As many throttles as used to spend a whole invocation: the reads are tried again in place instead.
    const replanner = createReplanner({
      ...deps(storeThrottlingReads(runId, PLATFORM_TRIES)),
      model: createHtnPlanModel(),
    });

    await expect(replanner.onStepFailed({ runId, stepId: 'B', generation: 1 })).resolves.toMatchObject({
      outcome: 'revised',
      revision: 2,
    });
    await stack.request('POST', `/runs/${runId}/cancel`);
  });

  /** A run whose step B fails for good (its primary provider is down) while S keeps the run open. */
  async function runWithFailedStep(objective: string): Promise<string> {
    const steps: PlanStep[] = [
      step(stack, 'B', PROVIDERS.primary, { input: { value: 'b', fail: ['primary'] } }),
      step(stack, 'S', T.sleep, { input: { ms: 20_000 } }),
    ];
    const runId = await stack.startRun({ plan: plan(objective, steps) });
    await waitForRun(stack, runId, (run) => run.steps.find((s) => s.id === 'B')?.status === 'failed');
    return runId;
  }

  it.each([
    ['startGeneration is throttled after the revision became current', 'startGeneration', 'before', injectedThrottle],
    ['updateRun making the revision current timed out after it landed', 'updateRun', 'after', timeout],
    ['putPlanRevision timed out after it stored the revision', 'putPlanRevision', 'after', timeout],
  ] as const)('finishes the revision instead of declining the failure when %s', async (_, method, when, error) => {
    const runId = await runWithFailedStep(`replan with ${method} failing`);
    const replanner = createReplanner({
      ...deps(storeFailing(runId, method, when, error)),
      model: createHtnPlanModel(),
    });

    const answered = await replanner.onStepFailed({ runId, stepId: 'B', generation: 1 });

    expect(answered).toMatchObject({ outcome: 'revised', revision: 2 });
    const run = await waitForRun(stack, runId, (r) => r.steps.find((s) => s.id === 'B')?.status === 'succeeded');
    expect(run).toMatchObject({ status: 'running', revision: 2 });
    expect((await stack.store.getRun(runId))?.replanDeclines ?? []).toEqual([]);
    expect((await stack.store.getStep(runId, 'B'))?.generation).toBe(2);
    await stack.request('POST', `/runs/${runId}/cancel`);
  });

  it('finishes on the redelivery a revision whose records kept failing in the first invocation', async () => {
    const runId = await runWithFailedStep('replan with startGeneration throttled for a while');
    const replanner = createReplanner({
      ...deps(storeFailing(runId, 'startGeneration', 'before', injectedThrottle, PLATFORM_TRIES)),
      model: createHtnPlanModel(),
    });
    const ref = { runId, stepId: 'B', generation: 1 };

    await expect(replanner.onStepFailed(ref)).rejects.toThrow(/injected/);
    expect((await stack.store.getRun(runId))?.revision).toBe(2);
    const redelivered = await replanner.onStepFailed(ref);

    expect(redelivered).toMatchObject({ outcome: 'revised', revision: 2 });
    await waitForRun(stack, runId, (r) => r.steps.find((s) => s.id === 'B')?.status === 'succeeded');
    expect((await stack.store.getRun(runId))?.replanDeclines ?? []).toEqual([]);
    await stack.request('POST', `/runs/${runId}/cancel`);
  });

  it('answers when taking the failure timed out after the mark landed', async () => {
    const runId = await runWithFailedStep('replan with the mark lost');
    const replanner = createReplanner({
      ...deps(storeFailing(runId, 'markRunOnce', 'after', timeout)),
      model: createHtnPlanModel(),
    });
    const ref = { runId, stepId: 'B', generation: 1 };

    // The mark that landed is given back, so taking it again in place (as the redelivery would) is no duplicate.
    const answered = await replanner.onStepFailed(ref);

    expect(answered).toMatchObject({ outcome: 'revised', revision: 2 });
    await stack.request('POST', `/runs/${runId}/cancel`);
  });
});
