/**
 * The invalidator service on the real store (dynalite) with the coordinator harness: the step machine is driven by
 * the harness, the run machine's reopened execution by hand (awaitRun, finalizeRun), so each rule is observed in
 * isolation: reopening and the new run execution, the outlived execution's last word, a new deadline, upstream
 * failures outside the invalidation, concurrent and repeated requests, superseded gates.
 */
import { describe, expect, it } from 'vitest';
import { isConflictError, isNotFoundError } from '../../shared/errors.ts';
import { runExecutionName } from '../../shared/ports/executions.ts';
import { createInvalidator, type Invalidator } from '../../shared/services/invalidator.ts';
import {
  createPlannedRun,
  drainSteps,
  type Harness,
  planOf,
  runPlan,
  step,
  TEST_CATALOG,
  TEST_CONFIG,
  useCoordinatorHarness,
} from '../support/coordinator-harness.ts';

const harness = useCoordinatorHarness();

const invalidatorOf = (h: Harness): Invalidator =>
  createInvalidator({
    store: h.store,
    executions: h.executions,
    events: h.events,
    catalog: TEST_CATALOG,
    clock: () => new Date(),
    newId: () => 'id',
    config: TEST_CONFIG,
  });

const chain = planOf([step('a'), step('b', ['a']), step('c', ['b'])]);

describe('invalidator: reopening a finished run', () => {
  it('starts run-<id>-o1 with resume input, ignores the outlived execution and finalizes the new opening', async () => {
    const h = harness();
    const { runId, run } = await runPlan(h, chain);
    expect(run?.status).toBe('complete');

    const result = await invalidatorOf(h).invalidateStep({ runId, stepId: 'b', reason: 'stale' });

    expect(result).toEqual({ runId, stepIds: ['b', 'c'], reopened: true });
    const name = runExecutionName(`${runId}-o1`);
    expect(h.executions.startCalls.filter((c) => c.machine === 'run')).toEqual([
      {
        machine: 'run',
        name,
        input: { runId, resume: true, started: { deadlineSeconds: TEST_CONFIG.runDeadlineSeconds } },
      },
    ]);
    // The first execution's FinalizeRun, arriving after the reopening, must not end the new opening.
    const outlived = await h.coordinator.finalizeRun({
      runId,
      timedOut: null,
      error: null,
      execution: runExecutionName(runId),
    });
    expect(outlived.status).toBe('running');

    await h.coordinator.awaitRun({ runId, taskToken: `waiter2-${runId}` });
    await drainSteps(h);
    expect(h.executions.answered.get(`waiter2-${runId}`)).toEqual({ finished: true });
    const final = await h.coordinator.finalizeRun({ runId, timedOut: null, error: null, execution: name });
    expect(final.status).toBe('complete');
    const stored = await h.store.getRun(runId);
    expect(stored).toMatchObject({ reopened: 1, terminal: { state: 'complete' } });
    expect(stored?.previousTerminals).toHaveLength(1);
    expect(h.executions.startsOf('a')).toBe(1);
    expect(h.executions.startsOf('b')).toBe(2);
  });

  it('lets the new execution time out at its own deadline and records the new terminal', async () => {
    const h = harness();
    const { runId } = await runPlan(h, chain);
    await invalidatorOf(h).invalidateStep({ runId, stepId: 'c' });
    await h.coordinator.awaitRun({ runId, taskToken: `waiter2-${runId}` });

    // The deadline passes before the new generation of c ran (its execution was started, never driven).
    const final = await h.coordinator.finalizeRun({
      runId,
      timedOut: { Error: 'States.Timeout' },
      error: null,
      execution: runExecutionName(`${runId}-o1`),
    });

    expect(final).toMatchObject({ status: 'failed', terminal: { state: 'failed', reason: 'deadline' } });
    expect((await h.store.getStep(runId, 'c'))?.status).toBe('cancelled');
    expect((await h.store.getRun(runId))?.previousTerminals?.[0]?.state).toBe('complete');
  });

  it('blocks a new generation that waits for an upstream failure outside the invalidation; the run fails again', async () => {
    const h = harness();
    h.scripts.set('bad', () => ({ error: { code: 'E_BOOM', message: 'boom', retryable: false } }));
    const { runId, run } = await runPlan(h, planOf([step('bad'), step('w'), step('d', ['w', 'bad'])]));
    expect(run?.status).toBe('failed');

    const result = await invalidatorOf(h).invalidateStep({ runId, stepId: 'w' });

    expect(result).toEqual({ runId, stepIds: ['w', 'd'], reopened: true });
    expect(await h.store.getStep(runId, 'd')).toMatchObject({ generation: 2, status: 'blocked' });
    await drainSteps(h);
    expect(await h.store.getStep(runId, 'w')).toMatchObject({ generation: 2, status: 'succeeded' });
    expect(await h.store.getRun(runId)).toMatchObject({ status: 'failed', reopened: 1 });
  });
});

describe('invalidator: repeated and concurrent requests', () => {
  it('starts one new generation per step when two invalidations race', async () => {
    const h = harness();
    const { runId } = await runPlan(h, chain);
    const invalidator = invalidatorOf(h);

    const results = await Promise.all([
      invalidator.invalidateStep({ runId, stepId: 'b' }),
      invalidatorOf(h).invalidateStep({ runId, stepId: 'b' }),
    ]);

    expect(results.flatMap((r) => r.stepIds).sort()).toEqual(['b', 'c']);
    expect(results.filter((r) => r.reopened)).toHaveLength(1);
    await drainSteps(h);
    expect((await h.store.getStep(runId, 'c'))?.generation).toBe(2);
    expect(h.executions.startsOf('c')).toBe(2);
  });

  it('answers a repeated request id with the first result and invalidates once', async () => {
    const h = harness();
    const { runId } = await runPlan(h, chain);
    const invalidator = invalidatorOf(h);

    const first = await invalidator.invalidateStep({ runId, stepId: 'a', requestId: 'req-1' });
    const again = await invalidator.invalidateStep({ runId, stepId: 'a', requestId: 'req-1' });

    expect(again).toEqual(first);
    expect((await h.store.getStep(runId, 'a'))?.generation).toBe(2);
  });

  it('handles a resource event once per event id', async () => {
    const h = harness();
    const key = `bucket/${Date.now()}`;
    const { runId } = await runPlan(h, planOf([step('a', [], { watches: [key] }), step('b', ['a'])]));
    const invalidator = invalidatorOf(h);

    const first = await invalidator.invalidateResource({ resourceKey: key, eventId: 'e-1' });
    const again = await invalidator.invalidateResource({ resourceKey: key, eventId: 'e-1' });

    expect(first).toEqual({ duplicate: false, runs: [{ runId, stepIds: ['a', 'b'], reopened: true }] });
    expect(again).toEqual({ duplicate: true, runs: [] });
    expect((await h.store.getStep(runId, 'a'))?.generation).toBe(2);
  });

  it('refuses an unknown step (NotFoundError) and a run that has not started (ConflictError)', async () => {
    const h = harness();
    const { runId } = await runPlan(h, chain);
    const planning = await createPlannedRun(h, chain);
    const invalidator = invalidatorOf(h);

    expect(isNotFoundError(await invalidator.invalidateStep({ runId, stepId: 'zzz' }).catch((e) => e))).toBe(true);
    expect(isNotFoundError(await invalidator.invalidateStep({ runId: 'ghost', stepId: 'a' }).catch((e) => e))).toBe(
      true,
    );
    const refused = await invalidator.invalidateStep({ runId: planning.runId, stepId: 'a' }).catch((e) => e);
    expect(isConflictError(refused)).toBe(true);
  });
});

describe('invalidator: superseded work in flight', () => {
  it('stops the execution of a running generation and expires the approval of a waiting gate', async () => {
    const h = harness();
    const gate = step('g', [], { target: 'human:test.approver', approval: { question: 'ok?', timeoutSeconds: 60 } });
    const { runId } = await createPlannedRun(h, planOf([gate, step('after', ['g'])]));
    await h.coordinator.startRun({ runId });
    await h.coordinator.awaitRun({ runId, taskToken: `waiter-${runId}` });
    const drained = drainSteps(h);
    let pending = await h.store.listApprovals({ runId, status: 'pending' });
    for (let i = 0; i < 100 && pending.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      pending = await h.store.listApprovals({ runId, status: 'pending' });
    }
    for (let i = 0; i < 100 && (await h.store.getStep(runId, 'g'))?.status !== 'awaiting_approval'; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    const claimedBy = (await h.store.getStep(runId, 'g'))?.claimedBy;

    const result = await invalidatorOf(h).invalidateStep({ runId, stepId: 'g', reason: 'policy changed' });

    expect(result).toEqual({ runId, stepIds: ['g', 'after'], reopened: false });
    expect(h.executions.stopped).toContainEqual({ executionId: claimedBy, error: 'E_SUPERSEDED' });
    expect((await h.store.getApproval(pending[0]?.approvalId ?? ''))?.status).toBe('expired');
    // The old gate's decision, if it still came, belongs to generation 1 and is refused.
    const late = await h.coordinator.completeStep({ runId, stepId: 'g', generation: 1, attempt: 1 });
    expect(late.status).toBe('superseded');
    expect(await h.store.getStep(runId, 'g')).toMatchObject({ generation: 2 });
    // The new generation asks again; once approved, the run completes on it.
    // The old gate's wait ends (its execution was stopped; the harness times it out): generation 2 is untouched.
    await h.executions.sendTaskFailure(pending[0]?.taskToken ?? '', 'States.Timeout', 'the old gate timed out');
    let next = await h.store.listApprovals({ runId, status: 'pending' });
    for (let i = 0; i < 100 && next.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      next = await h.store.listApprovals({ runId, status: 'pending' });
    }
    expect(next.map((a) => a.generation)).toEqual([2]);
    await h.executions.sendTaskSuccess(next[0]?.taskToken ?? '', { decision: 'approve', by: 'ana' });
    await drained;
    expect(await h.store.getStep(runId, 'after')).toMatchObject({ generation: 2, status: 'succeeded' });
    expect((await h.store.getRun(runId))?.status).toBe('complete');
  });
});
