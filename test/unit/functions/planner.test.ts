import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { createHandler } from '../../../functions/planner.ts';
import type { PlanRequest } from '../../../shared/api/deps.ts';
import {
  isConflictError,
  isNotFoundError,
  isPlannerError,
  isValidationError,
  ModelError,
} from '../../../shared/errors.ts';
import type { Plan } from '../../../shared/plan/schema.ts';
import { plannerError } from '../../../shared/planner/errors.ts';
import type { Store } from '../../../shared/ports/store.ts';
import { startTestStore } from '../../support/dynalite.ts';
import { echoStep, fakePlanner, planOf, runRecord } from '../api/harness.ts';

const NOW = new Date('2030-01-02T03:04:05.000Z');

/** The DynamoDB store adapter on a fresh dynalite table, dropped after the test. Its own clock is the real one. */
async function freshStore(): Promise<Store> {
  const tested = await startTestStore();
  onTestFinished(() => tested.stop());
  return tested.store;
}

async function setup(planner: { plan(request: PlanRequest): Promise<Plan> } = fakePlanner) {
  const store = await freshStore();
  const requests: unknown[] = [];
  const handler = createHandler({
    store,
    planner: {
      plan: (request) => {
        requests.push(request);
        return planner.plan(request);
      },
    },
    clock: () => NOW,
  });
  return { store, handler, requests };
}

const caught = async (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('planner task (PlanRun)', () => {
  it('plans a DIRECT run with its mode and target and stores the candidate', async () => {
    const { store, handler, requests } = await setup();
    await store.createRun(
      runRecord('r', { status: 'planning', revision: 0, mode: 'DIRECT', directTarget: 'tool:echo', objective: 'hi' }),
    );
    expect(await handler({ runId: 'r' })).toEqual({ runId: 'r' });
    expect(requests).toEqual([{ objective: 'hi', mode: 'DIRECT', directTarget: 'tool:echo' }]);
    const run = await store.getRun('r');
    expect((run?.candidatePlan as Plan | undefined)?.steps.map((s) => s.target)).toEqual(['tool:echo']);
    expect(run?.updatedAt).toBe(NOW.toISOString());
    expect(run?.status).toBe('planning');
  });

  it('leaves a submitted plan where it is, without planning or writing a copy', async () => {
    const { store, handler, requests } = await setup();
    const plan = planOf([echoStep('a')], 'submitted');
    await store.createRun(runRecord('r', { status: 'planning', revision: 0, mode: 'SUBMITTED', submittedPlan: plan }));
    const before = await store.getRun('r');
    expect(await handler({ runId: 'r' })).toEqual({ runId: 'r' });
    expect(requests).toEqual([]);
    const after = await store.getRun('r');
    expect(after?.candidatePlan).toBeUndefined();
    expect(after?.submittedPlan).toEqual(plan);
    expect(after?.updatedAt).toBe(before?.updatedAt);
  });

  it('asks for DECOMPOSE when the run has no direct target', async () => {
    const { store, handler, requests } = await setup();
    await store.createRun(runRecord('r', { status: 'planning', revision: 0, mode: 'DECOMPOSE', objective: 'report' }));
    const error = await caught(handler({ runId: 'r' }));
    expect(requests).toEqual([{ objective: 'report', mode: 'DECOMPOSE' }]);
    expect(isPlannerError(error)).toBe(true);
    expect((error as { context: { code: string } }).context.code).toBe('E_NO_METHOD');
    expect((await store.getRun('r'))?.candidatePlan).toBeUndefined();
  });

  it('passes CairnErrors through and wraps anything else in a PlannerError', async () => {
    const model = await setup({ plan: async () => Promise.reject(new ModelError('throttled', { retryable: true })) });
    await model.store.createRun(runRecord('r', { status: 'planning', revision: 0, mode: 'DECOMPOSE' }));
    expect(((await caught(model.handler({ runId: 'r' }))) as Error).name).toBe('ModelError');
    const bug = await setup({ plan: async () => Promise.reject(new TypeError('x is undefined')) });
    await bug.store.createRun(runRecord('r', { status: 'planning', revision: 0, mode: 'DECOMPOSE' }));
    const error = await caught(bug.handler({ runId: 'r' }));
    expect(isPlannerError(error)).toBe(true);
    expect((error as Error).message).toContain('x is undefined');
    const coded = await setup({ plan: async () => Promise.reject(plannerError('E_MODEL_EMPTY', 'nothing')) });
    await coded.store.createRun(runRecord('r', { status: 'planning', revision: 0, mode: 'DECOMPOSE' }));
    expect(((await caught(coded.handler({ runId: 'r' }))) as { context: { code: string } }).context.code).toBe(
      'E_MODEL_EMPTY',
    );
  });

  it('fails with stable names for a bad payload, an unknown run or a run that left planning', async () => {
    const { store, handler } = await setup();
    expect(isValidationError(await caught(handler({})))).toBe(true);
    expect(isValidationError(await caught(handler({ runId: '' })))).toBe(true);
    expect(isNotFoundError(await caught(handler({ runId: 'nope' })))).toBe(true);
    await store.createRun(runRecord('c', { status: 'cancelled', mode: 'DIRECT', directTarget: 'tool:echo' }));
    expect(isConflictError(await caught(handler({ runId: 'c' })))).toBe(true);
  });

  it('drops the candidate when the run is cancelled while planning', async () => {
    const store = await freshStore();
    const handler = createHandler({
      store,
      planner: {
        plan: async (request) => {
          await store.updateRun('r', ['planning'], { status: 'cancelled' });
          return fakePlanner.plan(request);
        },
      },
      clock: () => NOW,
    });
    await store.createRun(
      runRecord('r', { status: 'planning', revision: 0, mode: 'DIRECT', directTarget: 'tool:echo' }),
    );
    expect(isConflictError(await caught(handler({ runId: 'r' })))).toBe(true);
    expect(await store.getRun('r')).toMatchObject({ status: 'cancelled' });
    expect((await store.getRun('r'))?.candidatePlan).toBeUndefined();
  });

  it("stores the planner's validation stamp with the plan it made", async () => {
    const store = await freshStore();
    const handler = createHandler({
      store,
      planner: { plan: (request) => fakePlanner.plan(request), stamp: (plan) => `stamp of ${plan.objective}` },
      clock: () => NOW,
    });
    await store.createRun(
      runRecord('r', { status: 'planning', revision: 0, mode: 'DIRECT', directTarget: 'tool:echo', objective: 'hi' }),
    );
    await handler({ runId: 'r' });
    expect(await store.getRun('r')).toMatchObject({ planStamp: 'stamp of hi' });
  });

  it('keeps the stamp the API stored with a submitted plan', async () => {
    const store = await freshStore();
    const stamp = vi.fn(() => 'a planner stamp');
    const handler = createHandler({
      store,
      planner: { plan: (request) => fakePlanner.plan(request), stamp },
      clock: () => NOW,
    });
    const plan = planOf([echoStep('a')], 'submitted');
    await store.createRun(
      runRecord('r', {
        status: 'planning',
        revision: 0,
        mode: 'SUBMITTED',
        submittedPlan: plan,
        planStamp: 'api stamp',
      }),
    );
    await handler({ runId: 'r' });
    expect(stamp).not.toHaveBeenCalled();
    expect(await store.getRun('r')).toMatchObject({ submittedPlan: plan, planStamp: 'api stamp' });
  });
});
