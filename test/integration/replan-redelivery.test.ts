/**
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
import { createReplanner } from '../../shared/services/replanner.ts';
import { plan, step, useTestStack, waitForRun } from '../support/local-stack.ts';
import { createReplanPack, PROVIDERS } from '../support/replan-pack.ts';
import { injectedThrottle, interceptStore, secondProcessDeps } from '../support/second-process.ts';

// The stack's own replanner is off (maxReplans 0): the one under test is the second process below.
const stack = useTestStack({ extraCapabilities: createReplanPack(), limits: { maxReplans: 0 } });

/** The stack's store, whose first `getRun` of `runId` is throttled (as DynamoDB's, once the SDK gave up). */
function storeThrottlingFirstRead(runId: string): Store {
  let fired = false;
  return interceptStore(stack.store, ['getRun'], async (call, [id]) => {
    if (!fired && id === runId) {
      fired = true;
      throw injectedThrottle();
    }
    return call();
  });
}

const deps = (store: Store) => secondProcessDeps(stack, store, { maxReplans: 3 });

describe('replanner.onStepFailed', () => {
  it('answers the redelivery of a failure whose first handling was throttled after it was taken', async () => {
    const steps: PlanStep[] = [
      step(stack, 'B', PROVIDERS.primary, { input: { value: 'b', fail: ['primary'] } }),
      step(stack, 'S', T.sleep, { input: { ms: 20_000 } }),
    ];
    const runId = await stack.startRun({ plan: plan('replan after a throttled read', steps) });
    await waitForRun(stack, runId, (run) => run.steps.find((s) => s.id === 'B')?.status === 'failed');
    const replanner = createReplanner({ ...deps(storeThrottlingFirstRead(runId)), model: createHtnPlanModel() });
    const ref = { runId, stepId: 'B', generation: 1 };

    await expect(replanner.onStepFailed(ref)).rejects.toThrow(/Rate exceeded/);
    const redelivered = await replanner.onStepFailed(ref);

    expect(redelivered).toMatchObject({ outcome: 'revised', revision: 2 });
    await stack.request('POST', `/runs/${runId}/cancel`);
  });
});
