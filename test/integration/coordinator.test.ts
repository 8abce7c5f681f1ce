/**
 * The engine from submission to a terminal state, through the real run and step machines (the synthesized ASL run
 * by the embedded runtime), the real handlers and dynalite: failures and what they block, retries, conditions and
 * inputs, and scheduling without a barrier, each step started and run exactly once.
 */
import { describe, expect, it } from 'vitest';
import { runExecutionName, stepExecutionInput, stepExecutionName } from '../../shared/ports/executions.ts';
import { eventually, useEngineStack } from '../support/engine-stack.ts';
import { fail, flaky, held, succeed, TARGETS, together } from '../support/scripted-pack.ts';

const engine = useEngineStack();

describe('a run to its terminal state', () => {
  it('fails a diamond with a failing branch naming the root cause, blocks downstream, runs the independent branch', async () => {
    const { step, runPlan, published, stepExecutions, pack } = engine();
    const { runId, run, steps, execution } = await runPlan([
      step('a'),
      step('b', ['a'], { script: fail('E_BOOM', false) }),
      step('c', ['a']),
      step('d', ['b', 'c']),
      step('e'),
      step('f', ['d']),
    ]);

    expect(steps.get('a')?.status).toBe('succeeded');
    expect(steps.get('b')).toMatchObject({ status: 'failed', error: { code: 'E_BOOM', retryable: false } });
    expect(steps.get('c')?.status).toBe('succeeded');
    expect(steps.get('d')).toMatchObject({ status: 'blocked', error: { code: 'E_BLOCKED' } });
    expect(steps.get('f')?.status).toBe('blocked');
    expect(steps.get('e')?.status).toBe('succeeded');
    expect(run.status).toBe('failed');
    expect(run.terminal).toMatchObject({ state: 'failed', reason: 'step_failed' });
    expect(run.terminal?.evidence.rootCauses).toEqual(['b']);
    // The run machine's wait was answered when the run finished: it did not wait for its deadline.
    expect(execution?.status).toBe('SUCCEEDED');
    expect(stepExecutions(runId, 'd')).toHaveLength(0);
    expect(pack.calls(runId, 'd')).toHaveLength(0);
    expect(
      published('StepBlocked', runId)
        .map((e) => e.detail.stepId)
        .sort(),
    ).toEqual(['d', 'f']);
    expect(published('RunFinished', runId)).toHaveLength(1);
  });

  it('completes a run whose steps all succeed, passing outputs downstream through input expressions', async () => {
    const { step, runPlan, stack } = engine();
    const { runId, run, steps } = await runPlan([
      step('a', [], { script: succeed({ n: 41 }) }),
      // The count tool answers with its input: b's output is what the expression made of a's.
      step('b', ['a'], { target: TARGETS.count, input: { n: '{% $outputs.a.n + 1 %}' } }),
    ]);
    expect(run).toMatchObject({ status: 'complete', terminal: { state: 'complete', reason: 'completed' } });
    expect(steps.get('b')?.output).toEqual({ n: 42 });
    const events = await stack.store.listEvents(runId);
    expect(events[0]?.type).toBe('RunStarted');
    expect(events.at(-1)?.type).toBe('RunFinished');
  });

  it('keeps only the last trace entry of a succeeded step and the full trace of a failed one', async () => {
    const { step, runPlan } = engine();
    const { steps } = await runPlan([step('good'), step('bad', [], { script: fail('E_BOOM', false) })]);
    expect(steps.get('good')?.trace).toHaveLength(1);
    expect(steps.get('good')?.trace[0]?.kind).toBe('judge');
    // The whole story of the failed step: planned, executed (claim and call), failed.
    const kinds = steps.get('bad')?.trace.map((t) => t.kind) ?? [];
    expect(kinds[0]).toBe('plan');
    expect(kinds).toContain('exec');
    expect(kinds.at(-1)).toBe('fail');
  });
});

describe('retries', () => {
  it('retries a flaky step within its cap and succeeds, one attempt record each', async () => {
    const { step, runPlan, published, pack, stack } = engine();
    const { runId, run, steps } = await runPlan([step('flaky', [], { maxRetries: 2, script: flaky(2) })]);
    expect(run.status).toBe('complete');
    expect(steps.get('flaky')).toMatchObject({ status: 'succeeded', attempts: 3, output: { attempt: 3 } });
    expect(pack.calls(runId, 'flaky').map((c) => c.attempt)).toEqual([1, 2, 3]);
    // The decision of each failure: the next attempt after an exponential backoff (base 1 s).
    expect(published('StepRetrying', runId, 'flaky').map((e) => [e.detail.attempt, e.detail.delaySeconds])).toEqual([
      [2, 1],
      [3, 2],
    ]);
    const attempts = await stack.store.listAttempts(runId, 'flaky');
    expect(attempts.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'succeeded'],
    ]);
  });

  it('fails a step that keeps failing after maxRetries + 1 attempts, with the error filled in', async () => {
    const { step, runPlan, published, stack } = engine();
    const { runId, run, steps } = await runPlan([
      step('flaky', [], { maxRetries: 2, script: flaky(99, 'E_FLAKY') }),
      step('after', ['flaky']),
    ]);
    expect(steps.get('flaky')).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'E_FLAKY' } });
    expect(steps.get('after')?.status).toBe('blocked');
    // Two retries, then the final failure.
    expect(published('StepRetrying', runId, 'flaky')).toHaveLength(2);
    expect(published('StepFailed', runId, 'flaky').map((e) => e.detail.final)).toEqual([true]);
    expect(await stack.store.listAttempts(runId, 'flaky')).toHaveLength(3);
    expect(run.terminal?.evidence.rootCauses).toEqual(['flaky']);
  });

  it('fails a permanent error at once without spending retries', async () => {
    const { step, runPlan, published, pack, stack } = engine();
    const { runId, steps } = await runPlan([step('broken', [], { maxRetries: 5, script: fail('E_PERMANENT', false) })]);
    expect(steps.get('broken')).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'E_PERMANENT' } });
    expect(published('StepFailed', runId, 'broken')).toHaveLength(1);
    expect(published('StepRetrying', runId)).toHaveLength(0);
    expect(pack.calls(runId, 'broken')).toHaveLength(1);
    expect(await stack.store.listAttempts(runId, 'broken')).toHaveLength(1);
  });
});

describe('conditions and inputs', () => {
  it('skips a step whose when is false and still runs its dependents', async () => {
    const { step, runPlan, published, stepExecutions, pack } = engine();
    const { runId, run, steps } = await runPlan([
      step('check', [], { script: succeed({ go: false }) }),
      step('maybe', ['check'], { when: '{% $outputs.check.go %}' }),
      step('after', ['maybe'], { input: { skipped: '{% $outputs.maybe = null %}' } }),
    ]);
    expect(steps.get('maybe')?.status).toBe('skipped');
    expect(pack.calls(runId, 'maybe')).toHaveLength(0);
    expect(steps.get('after')).toMatchObject({ status: 'succeeded', output: { skipped: true } });
    expect(run.status).toBe('complete');
    expect(stepExecutions(runId, 'after')).toHaveLength(1);
    expect(pack.calls(runId, 'after')).toHaveLength(1);
    expect(published('StepSkipped', runId, 'maybe')).toHaveLength(1);
  });

  it('fails a step whose evaluated input breaks the inputSchema before anything runs, blocking downstream', async () => {
    const { step, runPlan, pack, stack } = engine();
    const { runId, run, steps } = await runPlan([
      step('count', [], { target: TARGETS.count, input: { n: '{% "not a number" %}' } }),
      step('after', ['count']),
    ]);
    expect(steps.get('count')).toMatchObject({ status: 'failed', error: { code: 'E_INPUT_SCHEMA', retryable: false } });
    expect(await stack.store.listAttempts(runId, 'count')).toHaveLength(0);
    expect(pack.calls(runId)).toHaveLength(0);
    expect(steps.get('after')?.status).toBe('blocked');
    expect(run.terminal?.evidence.rootCauses).toEqual(['count']);
  });

  it('fails a step whose output breaks its outputSchema, without retrying it', async () => {
    const { step, runPlan, pack } = engine();
    const { runId, steps } = await runPlan([
      step('count', [], { target: TARGETS.count, input: { n: 1 }, maxRetries: 3, script: succeed({ n: 'one' }) }),
    ]);
    expect(steps.get('count')).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'E_OUTPUT_SCHEMA' } });
    expect(pack.calls(runId, 'count')).toHaveLength(1);
  });
});

describe('completion is never vacuous', () => {
  it('fails a run in which every step was skipped', async () => {
    const { step, runPlan } = engine();
    const { run, execution } = await runPlan([step('only', [], { when: '{% false %}' })]);
    expect(run).toMatchObject({ status: 'failed', terminal: { reason: 'nothing_succeeded' } });
    expect(execution?.status).toBe('SUCCEEDED');
  });

  it('rejects a plan that fails validation when the run machine checks it, executing nothing', async () => {
    const { stack, step, quiet, outcome, published, pack } = engine();
    // A plan stored without the API's check (as an older API, or one with other limits, may have left it): the
    // run machine's ValidatePlan is what stops it.
    const runId = `rejected-${Date.now()}`;
    const now = new Date().toISOString();
    await stack.store.createRun({
      runId,
      status: 'planning',
      objective: 'an invalid plan',
      mode: 'SUBMITTED',
      submittedPlan: {
        schemaVersion: 1,
        revision: 1,
        objective: 'an invalid plan',
        steps: [step('a'), step('b', ['a'], { target: 'tool:test.missing' })],
      },
      revision: 0,
      createdAt: now,
      updatedAt: now,
      replans: 0,
    });
    await stack.executions.start('run', runExecutionName(runId), { runId });
    await quiet();
    const { run, steps, execution } = await outcome(runId);
    expect(run).toMatchObject({ status: 'failed', terminal: { reason: 'invalid_plan' } });
    expect(run.terminal?.evidence.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'E_UNKNOWN_TARGET' })]),
    );
    expect(execution?.status).toBe('SUCCEEDED');
    expect(steps.size).toBe(0);
    expect(stack.executions.list().filter((e) => e.machine === 'step' && e.name.startsWith(runId))).toEqual([]);
    expect(pack.calls(runId)).toHaveLength(0);
    expect(published('RunFinished', runId)).toHaveLength(1);
  });
});

describe('scheduling without a barrier, exactly once', () => {
  it('starts the child of two parents finishing at the same moment exactly once (40 runs)', async () => {
    const { step, submit, quiet, outcome, pack, published, stepExecutions } = engine();
    const runIds = await Promise.all(
      Array.from({ length: 40 }, () => {
        const both = together(2);
        return submit([
          step('p1', [], { script: both }),
          step('p2', [], { script: both }),
          step('child', ['p1', 'p2']),
        ]);
      }),
    );
    await quiet();
    for (const runId of runIds) {
      const { run, steps } = await outcome(runId);
      const child = steps.get('child');
      expect(run.status, runId).toBe('complete');
      expect(child).toMatchObject({ status: 'succeeded', remaining: 0, attempts: 1 });
      expect([...(child?.released ?? [])].sort()).toEqual(['p1', 'p2']);
      // Started once, after both parents had finished.
      expect(stepExecutions(runId, 'child').map((e) => e.name)).toEqual([stepExecutionName(runId, 'child', 1)]);
      expect(pack.calls(runId, 'child')).toHaveLength(1);
      expect(published('StepStarted', runId, 'child')).toHaveLength(1);
      for (const parent of ['p1', 'p2'])
        expect(String(child?.startedAt) >= String(steps.get(parent)?.finishedAt), parent).toBe(true);
    }
  });

  it('starts a child only once its last parent has finished, whatever the others do meanwhile', async () => {
    const { step, submit, quiet, outcome, pack, stepExecutions } = engine();
    const slow = held();
    const runId = await submit([step('p1'), step('p2', [], { script: slow.script }), step('child', ['p1', 'p2'])]);
    await eventually(
      () => outcome(runId),
      (o) => o.steps.get('p1')?.status === 'succeeded' && pack.calls(runId, 'p2').length === 1,
      'p1 finished while p2 runs',
    );
    // p2's execution is busy (quiet would wait for it): give a child started too early the time to show.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const waiting = await outcome(runId);
    expect(waiting.steps.get('child')).toMatchObject({ status: 'pending', remaining: 1, released: ['p1'] });
    expect(stepExecutions(runId, 'child')).toHaveLength(0);

    slow.release();
    await quiet();
    const { run, steps } = await outcome(runId);
    expect(run.status).toBe('complete');
    expect(steps.get('child')).toMatchObject({ status: 'succeeded', remaining: 0 });
    expect(stepExecutions(runId, 'child')).toHaveLength(1);
    expect(pack.calls(runId, 'child')).toHaveLength(1);
  });

  it('runs a late duplicate of a finished step execution as a no-op', async () => {
    const { stack, step, runPlan, quiet, outcome, published, pack } = engine();
    const first = await runPlan([step('parent'), step('child', ['parent'])]);
    const before = first.steps;

    // The same execution input again (a duplicate delivery), twice at once, under fresh names.
    const input = stepExecutionInput({ runId: first.runId, stepId: 'parent', generation: 1 });
    const name = stepExecutionName(first.runId, 'parent', 1);
    await Promise.all(['dup1', 'dup2'].map((suffix) => stack.executions.start('step', `${name}-${suffix}`, input)));
    await quiet();

    const after = await outcome(first.runId);
    expect(after.steps).toEqual(before);
    expect(after.run.status).toBe('complete');
    expect(published('StepSucceeded', first.runId, 'parent')).toHaveLength(1);
    expect(published('StepStarted', first.runId, 'child')).toHaveLength(1);
    expect(pack.calls(first.runId, 'parent')).toHaveLength(1);
    expect(pack.calls(first.runId, 'child')).toHaveLength(1);
    for (const suffix of ['dup1', 'dup2'])
      expect(stack.executions.list().find((e) => e.name === `${name}-${suffix}`)?.status).toBe('SUCCEEDED');
  });

  it('never lets a superseded generation overwrite the current one', async () => {
    const { stack, step, submit, quiet, outcome, published, pack } = engine();
    // Generation 1 of s is held in its capability call while s is invalidated (generation 2 runs at once).
    const gen1 = held((call) => ({ output: { from: `generation ${call.generation}` } }));
    const runId = await submit([
      step('s', [], {
        script: (call) => (call.generation === 1 ? gen1.script(call) : { output: { from: 'generation 2' } }),
      }),
    ]);
    await eventually(
      async () => pack.calls(runId, 's'),
      (calls) => calls.length === 1,
      'the first call of s',
    );
    const answer = await stack.request('POST', `/runs/${runId}/steps/s/invalidate`, { reason: 'inputs moved' });
    expect(answer).toMatchObject({ status: 202, json: { stepIds: ['s'] } });
    await eventually(
      () => outcome(runId),
      (o) => o.steps.get('s')?.status === 'succeeded',
      'generation 2 of s succeeding',
    );

    // Generation 1's call answers late: its RunStep goes on and must change nothing.
    gen1.release();
    await quiet();
    // And a late duplicate of generation 1's execution is refused too.
    await stack.executions.start(
      'step',
      `${stepExecutionName(runId, 's', 1)}-late`,
      stepExecutionInput({ runId, stepId: 's', generation: 1 }),
    );
    await quiet();

    const { run, steps } = await outcome(runId);
    expect(steps.get('s')).toMatchObject({ status: 'succeeded', generation: 2, output: { from: 'generation 2' } });
    expect(published('StepSucceeded', runId).map((e) => e.detail.generation)).toEqual([2]);
    expect(published('StepFailed', runId)).toHaveLength(0);
    expect(pack.calls(runId, 's').map((c) => c.generation)).toEqual([1, 2]);
    expect(run.status).toBe('complete');
  });

  it('runs every step of a wide fan-out once and completes', async () => {
    const { step, runPlan, stepExecutions, pack } = engine();
    const fan = Array.from({ length: 8 }, (_, i) => step(`w${i}`, ['root']));
    const ids = ['root', ...fan.map((f) => f.id), 'join'];
    const { runId, run } = await runPlan([
      step('root'),
      ...fan,
      step(
        'join',
        fan.map((s) => s.id),
      ),
    ]);
    expect(run.status).toBe('complete');
    for (const id of ids) {
      expect(stepExecutions(runId, id), id).toHaveLength(1);
      expect(pack.calls(runId, id), id).toHaveLength(1);
    }
  });

  it('runs steps a.b and a_b of one plan each once: their execution names differ', async () => {
    const { step, runPlan, stepExecutions, pack } = engine();
    const { runId, run, steps } = await runPlan([step('a.b'), step('a_b'), step('join', ['a.b', 'a_b'])]);
    expect(run.status).toBe('complete');
    expect([...steps.values()].map((s) => [s.stepId, s.status])).toEqual([
      ['a.b', 'succeeded'],
      ['a_b', 'succeeded'],
      ['join', 'succeeded'],
    ]);
    for (const id of ['a.b', 'a_b']) {
      expect(stepExecutions(runId, id), id).toHaveLength(1);
      expect(pack.calls(runId, id), id).toHaveLength(1);
    }
    expect(stepExecutionName(runId, 'a.b', 1)).not.toBe(stepExecutionName(runId, 'a_b', 1));
  });

  it('lets only the execution the decider started run a generation, whatever duplicates start beside it', async () => {
    const { stack, step, quiet, outcome, published, pack } = engine();
    const slow = held();
    const runId = await stack.startRun({
      plan: {
        schemaVersion: 1,
        revision: 1,
        objective: `duplicates ${Date.now()}`,
        steps: [step('s', [], { script: slow.script })],
      },
    });
    await eventually(
      async () => pack.calls(runId, 's'),
      (calls) => calls.length === 1,
      'the first call of s',
    );
    // Three duplicates of s's execution (a redelivered start, under other names) while its call is under way.
    const input = stepExecutionInput({ runId, stepId: 's', generation: 1 });
    for (const suffix of ['x1', 'x2', 'x3'])
      await stack.executions.start('step', `${stepExecutionName(runId, 's', 1)}-${suffix}`, input);
    slow.release();
    await quiet();

    const { run, steps } = await outcome(runId);
    expect(run.status).toBe('complete');
    expect(steps.get('s')).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(steps.get('s')?.claimedBy).toBe(stepExecutionName(runId, 's', 1));
    expect(pack.calls(runId, 's')).toHaveLength(1);
    expect(published('StepStarted', runId, 's')).toHaveLength(1);
    expect(published('StepSucceeded', runId, 's')).toHaveLength(1);
    const executions = stack.executions.list().filter((e) => e.name.startsWith(stepExecutionName(runId, 's', 1)));
    expect(executions.map((e) => e.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
  });

  it('repeats a StartRun whose answer was lost without creating or starting anything twice', async () => {
    const { stack, step, submit, quiet, outcome, handlers, published, pack } = engine();
    const lost = handlers.loseAnswer({ key: 'Coordinator', match: (p) => p.action === 'startRun' });
    const runId = await submit([step('a'), step('b', ['a'])]);
    await lost;
    await quiet();

    const { run } = await outcome(runId);
    expect(
      handlers.invocations('Coordinator').filter((p) => p.action === 'startRun' && p.runId === runId),
    ).toHaveLength(2);
    expect(run.status).toBe('complete');
    expect(published('RunStarted', runId)).toHaveLength(1);
    expect((await stack.store.listPlanRevisions(runId)).map((r) => r.revision)).toEqual([1]);
    expect(pack.calls(runId, 'a')).toHaveLength(1);
    expect(published('StepStarted', runId, 'a')).toHaveLength(1);
    expect(published('RunFinished', runId)).toHaveLength(1);
  });
});
