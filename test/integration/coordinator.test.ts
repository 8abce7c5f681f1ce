import { describe, expect, it } from 'vitest';
import { stepExecutionName } from '../../shared/ports/executions.ts';
import {
  createPlannedRun,
  drainSteps,
  type Harness,
  planOf,
  runPlan,
  step,
  useCoordinatorHarness,
} from '../support/coordinator-harness.ts';
import { at, uniqueId } from '../support/store-fixtures.ts';

const harness = useCoordinatorHarness();

const fails =
  (retryable: boolean, code = 'E_BOOM') =>
  () => ({ error: { code, message: `${code} happened`, retryable } });

describe('coordinator: a run to its terminal state', () => {
  it('fails a diamond with a failing branch naming the root cause, blocks downstream, runs the independent branch', async () => {
    const h = harness();
    h.scripts.set('b', fails(false));
    const plan = planOf([
      step('a'),
      step('b', ['a']),
      step('c', ['a']),
      step('d', ['b', 'c']),
      step('e'),
      step('f', ['d']),
    ]);
    const { run, steps, answered } = await runPlan(h, plan);

    expect(steps.get('a')?.status).toBe('succeeded');
    expect(steps.get('b')).toMatchObject({ status: 'failed', error: { code: 'E_BOOM' } });
    expect(steps.get('c')?.status).toBe('succeeded');
    expect(steps.get('d')).toMatchObject({ status: 'blocked', error: { code: 'E_BLOCKED' } });
    expect(steps.get('f')?.status).toBe('blocked');
    expect(steps.get('e')?.status).toBe('succeeded');
    expect(run?.status).toBe('failed');
    expect(run?.terminal).toMatchObject({ state: 'failed', reason: 'step_failed' });
    expect(run?.terminal?.evidence.rootCauses).toEqual(['b']);
    expect(answered).toBe(true);
    expect(h.executions.startsOf('d')).toBe(0);
    expect(
      h.events
        .of('StepBlocked')
        .map((e) => e.detail.stepId)
        .sort(),
    ).toEqual(['d', 'f']);
    expect(h.events.of('RunFinished')).toHaveLength(1);
  });

  it('completes a run whose steps all succeed, passing outputs downstream through input expressions', async () => {
    const h = harness();
    h.scripts.set('a', () => ({ output: { n: 41 } }));
    h.scripts.set('b', () => ({ output: { n: 42 } }));
    const plan = planOf([
      step('a'),
      step('b', ['a'], { target: 'tool:test.count', input: { n: '{% $outputs.a.n + 1 %}' } }),
    ]);
    const { runId, run, steps } = await runPlan(h, plan);
    expect(run).toMatchObject({ status: 'complete', terminal: { state: 'complete', reason: 'completed' } });
    expect(steps.get('b')?.output).toEqual({ n: 42 });
    const events = await h.store.listEvents(runId);
    expect(events[0]?.type).toBe('RunStarted');
    expect(events.at(-1)?.type).toBe('RunFinished');
  });

  it('keeps only the last trace entry of a succeeded step and the full trace of a failed one', async () => {
    const h = harness();
    h.scripts.set('bad', fails(false));
    const { steps } = await runPlan(h, planOf([step('good'), step('bad')]));
    expect(steps.get('good')?.trace).toHaveLength(1);
    expect(steps.get('good')?.trace[0]?.kind).toBe('judge');
    expect(steps.get('bad')?.trace.map((t) => t.kind)).toEqual(['plan', 'exec', 'fail']);
  });
});

describe('coordinator: retries', () => {
  it('retries a flaky step within its cap and succeeds, one attempt record each', async () => {
    const h = harness();
    h.scripts.set('flaky', (attempt) => (attempt <= 2 ? fails(true)() : { output: { attempt } }));
    const { runId, run, steps } = await runPlan(h, planOf([step('flaky', [], { maxRetries: 2 })]));
    expect(run?.status).toBe('complete');
    expect(steps.get('flaky')).toMatchObject({ status: 'succeeded', attempts: 3, output: { attempt: 3 } });
    expect(h.failures.get('flaky')).toEqual([
      { decision: 'retry', attempt: 2, delaySeconds: 1 },
      { decision: 'retry', attempt: 3, delaySeconds: 2 },
    ]);
    const attempts = await h.store.listAttempts(runId, 'flaky');
    expect(attempts.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'succeeded'],
    ]);
    expect(h.events.of('StepRetrying', 'flaky')).toHaveLength(2);
  });

  it('fails a step that keeps failing after maxRetries + 1 attempts, with the error filled in', async () => {
    const h = harness();
    h.scripts.set('flaky', fails(true, 'E_FLAKY'));
    const { runId, run, steps } = await runPlan(
      h,
      planOf([step('flaky', [], { maxRetries: 2 }), step('after', ['flaky'])]),
    );
    expect(steps.get('flaky')).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'E_FLAKY' } });
    expect(steps.get('after')?.status).toBe('blocked');
    expect(h.failures.get('flaky')?.map((f) => f.decision)).toEqual(['retry', 'retry', 'failed']);
    expect(await h.store.listAttempts(runId, 'flaky')).toHaveLength(3);
    expect(run?.terminal?.evidence.rootCauses).toEqual(['flaky']);
  });

  it('fails a permanent error at once without spending retries', async () => {
    const h = harness();
    h.scripts.set('broken', fails(false, 'E_PERMANENT'));
    const { runId, steps } = await runPlan(h, planOf([step('broken', [], { maxRetries: 5 })]));
    expect(steps.get('broken')).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'E_PERMANENT' } });
    expect(h.failures.get('broken')).toEqual([{ decision: 'failed' }]);
    expect(await h.store.listAttempts(runId, 'broken')).toHaveLength(1);
    expect(h.events.of('StepRetrying')).toHaveLength(0);
  });
});

describe('coordinator: conditions and inputs', () => {
  it('skips a step whose when is false and still runs its dependents', async () => {
    const h = harness();
    h.scripts.set('check', () => ({ output: { go: false } }));
    const plan = planOf([
      step('check'),
      step('maybe', ['check'], { when: '{% $outputs.check.go %}' }),
      step('after', ['maybe'], { input: { skipped: '{% $outputs.maybe = null %}' } }),
    ]);
    const { run, steps } = await runPlan(h, plan);
    expect(steps.get('maybe')?.status).toBe('skipped');
    expect(steps.get('after')?.status).toBe('succeeded');
    expect(run?.status).toBe('complete');
    expect(h.executions.startsOf('after')).toBe(1);
    expect(h.events.of('StepSkipped', 'maybe')).toHaveLength(1);
  });

  it('fails a step whose evaluated input breaks the inputSchema before anything runs, blocking downstream', async () => {
    const h = harness();
    const plan = planOf([
      step('count', [], { target: 'tool:test.count', input: { n: '{% "not a number" %}' } }),
      step('after', ['count']),
    ]);
    const { runId, run, steps } = await runPlan(h, plan);
    expect(steps.get('count')).toMatchObject({ status: 'failed', error: { code: 'E_INPUT_SCHEMA', retryable: false } });
    expect(await h.store.listAttempts(runId, 'count')).toHaveLength(0);
    expect(steps.get('after')?.status).toBe('blocked');
    expect(run?.terminal?.evidence.rootCauses).toEqual(['count']);
  });
});

describe('coordinator: completion is never vacuous', () => {
  it('fails a run in which every step was skipped', async () => {
    const h = harness();
    const { run } = await runPlan(h, planOf([step('only', [], { when: '{% false %}' })]));
    expect(run).toMatchObject({ status: 'failed', terminal: { reason: 'nothing_succeeded' } });
  });

  it('rejects a plan that is invalid when it is started, executing nothing', async () => {
    const h = harness({ maxSteps: 1 });
    const { run } = await runPlan(h, planOf([step('a'), step('b')]));
    expect(run).toMatchObject({ status: 'failed', terminal: { reason: 'invalid_plan' } });
    expect(h.executions.startCalls).toHaveLength(0);
  });
});

/** Starts a run and runs its steps up to (not including) their completion, so a test can complete them itself. */
async function startedRun(h: Harness, stepIds: string[], child: string) {
  const { runId } = await createPlannedRun(h, planOf([...stepIds.map((id) => step(id)), step(child, stepIds)]));
  await h.coordinator.startRun({ runId });
  for (const stepId of stepIds) {
    const ref = { runId, stepId, generation: 1 };
    await h.coordinator.claimStep({ ...ref, executionId: `exec-${stepId}` });
    await h.store.putAttempt({
      ...ref,
      attempt: 1,
      target: 'tool:test.echo',
      startedAt: at(0),
      outcome: 'succeeded',
      output: { stepId },
      evidence: {},
    });
    await h.coordinator.verifyStep({ ...ref, attempt: 1 });
  }
  return runId;
}

describe('coordinator: scheduling without a barrier, exactly once', () => {
  it('starts the child of two parents completing concurrently exactly once (50 times)', async () => {
    for (let i = 0; i < 50; i++) {
      const h = harness();
      const runId = await startedRun(h, ['p1', 'p2'], 'child');
      await Promise.all(
        ['p1', 'p2'].map((stepId) => h.coordinator.completeStep({ runId, stepId, generation: 1, attempt: 1 })),
      );
      const child = await h.store.getStep(runId, 'child');
      expect(child).toMatchObject({ status: 'ready', remaining: 0 });
      expect([...(child?.released ?? [])].sort()).toEqual(['p1', 'p2']);
      expect(h.executions.startsOf('child')).toBe(1);
      expect(h.executions.started.has(`arn:test:execution:step:${stepExecutionName(runId, 'child', 1)}`)).toBe(true);
    }
  });

  it('treats a duplicate completeStep as a no-op', async () => {
    const h = harness();
    const runId = await startedRun(h, ['parent'], 'child');
    const ref = { runId, stepId: 'parent', generation: 1, attempt: 1 };
    await h.coordinator.completeStep(ref);
    const before = await h.store.getStep(runId, 'parent');
    const childBefore = await h.store.getStep(runId, 'child');
    await Promise.all([h.coordinator.completeStep(ref), h.coordinator.completeStep(ref)]);
    expect(await h.store.getStep(runId, 'parent')).toEqual(before);
    expect(await h.store.getStep(runId, 'child')).toEqual(childBefore);
    expect(h.events.of('StepSucceeded', 'parent')).toHaveLength(1);
    expect(h.executions.startsOf('child')).toBe(1);
  });

  it('never lets a superseded generation overwrite the current one', async () => {
    const h = harness();
    // A run whose step s is at generation 2 (as after an invalidation), claimed by the generation-2 execution.
    const runId = uniqueId('run');
    const plan = planOf([step('s')]);
    await h.store.createRun({
      runId,
      status: 'running',
      objective: plan.objective,
      revision: 1,
      createdAt: at(0),
      updatedAt: at(0),
      replans: 0,
    });
    await h.store.putPlanRevision(runId, plan, 'initial plan');
    await h.store.putSteps([
      {
        runId,
        stepId: 's',
        status: 'running',
        generation: 2,
        upstream: [],
        remaining: 0,
        released: [],
        attempts: 1,
        trace: [],
        updatedAt: at(0),
        claimedBy: 'exec-g2',
      },
    ]);
    const attempt = (generation: number, output: unknown) => ({
      runId,
      stepId: 's',
      generation,
      attempt: 1,
      target: 'tool:test.echo',
      startedAt: at(0),
      outcome: 'succeeded' as const,
      output,
      evidence: {},
    });
    await h.store.putAttempt(attempt(1, { from: 'generation 1' }));
    await h.store.putAttempt(attempt(2, { from: 'generation 2' }));
    const old = { runId, stepId: 's', generation: 1 };

    expect(await h.coordinator.claimStep({ ...old, executionId: 'exec-g1' })).toMatchObject({ outcome: 'duplicate' });
    expect(await h.coordinator.verifyStep({ ...old, attempt: 1 })).toMatchObject({ verdict: 'fail' });
    expect(await h.coordinator.completeStep({ ...old, attempt: 1 })).toEqual({ status: 'superseded' });
    expect(await h.coordinator.recordFailure({ ...old, attempt: 1, error: { code: 'E', message: 'late' } })).toEqual({
      decision: 'failed',
    });
    expect(await h.store.getStep(runId, 's')).toMatchObject({ status: 'running', generation: 2 });

    await h.coordinator.completeStep({ runId, stepId: 's', generation: 2, attempt: 1 });
    await h.coordinator.completeStep({ ...old, attempt: 1 });
    expect(await h.store.getStep(runId, 's')).toMatchObject({ status: 'succeeded', output: { from: 'generation 2' } });
    expect(h.events.of('StepSucceeded').map((e) => e.detail.generation)).toEqual([2]);
    expect((await h.store.getRun(runId))?.status).toBe('complete');
  });

  it('runs every step of a wide fan-out once and completes', async () => {
    const h = harness();
    const fan = Array.from({ length: 8 }, (_, i) => step(`w${i}`, ['root']));
    const { run } = await runPlan(
      h,
      planOf([
        step('root'),
        ...fan,
        step(
          'join',
          fan.map((s) => s.id),
        ),
      ]),
    );
    expect(run?.status).toBe('complete');
    for (const s of [...fan.map((f) => f.id), 'root', 'join']) expect(h.executions.startsOf(s)).toBe(1);
  });

  it('claims a generation for one execution only', async () => {
    const h = harness();
    const { runId } = await createPlannedRun(h, planOf([step('s')]));
    await h.coordinator.startRun({ runId });
    const ref = { runId, stepId: 's', generation: 1 };
    const claims = await Promise.all(
      ['x1', 'x2', 'x3'].map((executionId) => h.coordinator.claimStep({ ...ref, executionId })),
    );
    expect(claims.filter((c) => c.outcome === 'claimed')).toHaveLength(1);
    expect(claims.filter((c) => c.outcome === 'duplicate')).toHaveLength(2);
    const winner = (await h.store.getStep(runId, 's'))?.claimedBy;
    expect(await h.coordinator.claimStep({ ...ref, executionId: winner ?? '' })).toMatchObject({ outcome: 'claimed' });
  });

  it('repeats startRun without creating or starting anything twice', async () => {
    const h = harness();
    const { runId } = await createPlannedRun(h, planOf([step('a'), step('b', ['a'])]));
    await h.coordinator.startRun({ runId });
    await h.coordinator.startRun({ runId });
    expect(h.executions.startsOf('a')).toBe(1);
    expect(h.events.of('RunStarted')).toHaveLength(1);
    expect((await h.store.listPlanRevisions(runId)).map((r) => r.revision)).toEqual([1]);
    await drainSteps(h);
    expect((await h.store.getRun(runId))?.status).toBe('complete');
  });
});
