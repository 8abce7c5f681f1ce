/**
 * Nothing is published for a run after its RunFinished (issue 10, §2), even when a cancellation lands in the middle
 * of a replan or an invalidation: another process (a second replanner or invalidator, as a second Lambda container
 * would be) runs on the same embedded stack with a store that lets the cancel through between its reads and its
 * writes. The run's audit log must end with RunFinished.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { createHtnPlanModel } from '../../shared/planner/htn/model.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import { createReplanner } from '../../shared/services/replanner.ts';
import { auditLog } from '../support/api-reads.ts';
import { plan, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';
import { createReplanPack, PROVIDERS } from '../support/replan-pack.ts';
import { interceptStore, secondProcessDeps } from '../support/second-process.ts';

// The stack's own replanner is off (maxReplans 0): the one under test is the second process below.
const stack = useTestStack({ extraCapabilities: createReplanPack(), limits: { maxReplans: 0 } });

/** The stack's store, with a hook run once right after the first call of `method` that `when` accepts. */
function storeWithCancelAfter<K extends keyof Store>(
  method: K,
  when: (...args: Parameters<Store[K]>) => boolean,
  cancel: () => Promise<unknown>,
): Store {
  let fired = false;
  return interceptStore(stack.store, [method], async (call, args) => {
    const result = await call();
    if (!fired && when(...(args as Parameters<Store[K]>))) {
      fired = true;
      await cancel();
    }
    return result;
  });
}

const deps = (store: Store) => secondProcessDeps(stack, store, { maxReplans: 3 });

const cancel = (runId: string) => () => stack.request('POST', `/runs/${runId}/cancel`);

/** The events the run's log holds after its (one) RunFinished. */
async function afterFinish(runId: string): Promise<string[]> {
  await stack.settled();
  const events = await auditLog(stack, runId);
  const finished = events.findIndex((e) => e.type === 'RunFinished');
  expect(finished, events.map((e) => e.type).join(' ')).toBeGreaterThanOrEqual(0);
  return events.slice(finished + 1).map((e) => `${e.type}${e.stepId ? ` ${e.stepId}` : ''}`);
}

/** A run whose step `B` failed for good while `S` still sleeps, so the run is running. */
async function runWithFailedStep(): Promise<string> {
  const steps: PlanStep[] = [
    step(stack, 'B', PROVIDERS.primary, { input: { value: 'b', fail: ['primary'] } }),
    step(stack, 'S', T.sleep, { input: { ms: 20_000 } }),
  ];
  const runId = await stack.startRun({ plan: plan('replan racing a cancel', steps) });
  await waitForRun(stack, runId, (run) => run.steps.find((s) => s.id === 'B')?.status === 'failed');
  return runId;
}

describe('a replan racing a cancel', () => {
  it('publishes nothing after RunFinished when the cancel lands right after the revision is made current', async () => {
    const runId = await runWithFailedStep();
    const store = storeWithCancelAfter(
      'updateRun',
      (id, _from, patch) => id === runId && 'revision' in patch,
      cancel(runId),
    );
    const replanner = createReplanner({ ...deps(store), model: createHtnPlanModel() });

    const outcome = await replanner.onStepFailed({ runId, stepId: 'B', generation: 1 });

    expect(outcome).toMatchObject({ outcome: 'revised', revision: 2 });
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('cancelled');
    expect(await afterFinish(runId)).toEqual([]);
    // The revised step's new generation, started after the cancel, is closed rather than left open.
    expect(done.steps.filter((s) => !['cancelled', 'failed', 'superseded'].includes(s.status))).toEqual([]);
  });
});

describe('an invalidation racing a cancel', () => {
  it('publishes nothing after RunFinished when the cancel lands between its reads and its writes', async () => {
    const steps: PlanStep[] = [
      step(stack, 'A', T.echo, { input: { value: 'a' } }),
      step(stack, 'S', T.sleep, { dependsOn: ['A'], input: { ms: 20_000 } }),
    ];
    const runId = await stack.startRun({ plan: plan('invalidation racing a cancel', steps) });
    await waitForRun(stack, runId, (run) => run.steps.find((s) => s.id === 'S')?.status === 'running');
    const store = storeWithCancelAfter('listSteps', (id) => id === runId, cancel(runId));
    const invalidator = createInvalidator(deps(store));

    await invalidator.invalidateStep({ runId, stepId: 'A', reason: 'stale' }).catch(() => undefined);

    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('cancelled');
    expect(await afterFinish(runId)).toEqual([]);
    expect(done.steps.filter((s) => s.status !== 'cancelled' && s.status !== 'succeeded')).toEqual([]);
  });
});
