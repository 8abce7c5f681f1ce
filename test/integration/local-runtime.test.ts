/**
 * Plans run end to end through the embedded runtime: the synthesized ASL on aws-local-stepfunctions, the real
 * handlers, dynalite. These are the engine semantics people depend on, observed from the API.
 */
import { describe, expect, it } from 'vitest';
import { ledgerEntries, CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { stepExecutionInput, stepExecutionName } from '../../shared/ports/executions.ts';
import { getRun, plan, statusOf, step, stepOf, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

const stack = useTestStack();

const run = (steps: Parameters<typeof plan>[1], objective = 'integration') =>
  stack.startRun({ plan: plan(objective, steps) });

describe('the local runtime', () => {
  it('fails the root cause, blocks what is downstream of it and finishes the independent branch', async () => {
    const runId = await run([
      step(stack, 'A', T.echo, { input: { value: 'a' } }),
      step(stack, 'B', T.fail, { dependsOn: ['A'], input: { message: 'boom', retryable: false } }),
      step(stack, 'C', T.echo, { dependsOn: ['A'], input: { value: 'c' } }),
      step(stack, 'D', T.echo, { dependsOn: ['B', 'C'], input: { value: 'd' } }),
      step(stack, 'E', T.echo, { dependsOn: ['C'], input: { value: 'e' } }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect(statusOf(done, 'B')).toBe('failed');
    expect(statusOf(done, 'D')).toBe('blocked');
    expect(['A', 'C', 'E'].map((id) => statusOf(done, id))).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(stepOf(done, 'B').attempts).toBe(1);
    expect(JSON.stringify(done.terminal?.evidence)).toContain('B');
  });

  it('succeeds a flaky step within its retry cap, one attempt per try', async () => {
    const runId = await run([
      step(stack, 'F', T.flaky, { input: { key: `f-${Date.now()}`, failures: 2 }, maxRetries: 3 }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('complete');
    expect(stepOf(done, 'F').attempts).toBe(3);
  });

  it('fails a flaky step that needs more tries than its cap allows, with the error filled in', async () => {
    const runId = await run([
      step(stack, 'F', T.flaky, { input: { key: `g-${Date.now()}`, failures: 5 }, maxRetries: 2 }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'F').attempts).toBe(3);
    expect(stepOf(done, 'F').error?.code).toBe('E_CONFORMANCE_FLAKY');
  });

  it('fails a permanent error at once without burning retries', async () => {
    const runId = await run([step(stack, 'P', T.fail, { input: { message: 'no', retryable: false }, maxRetries: 5 })]);

    const done = await waitForRun(stack, runId);

    expect(stepOf(done, 'P')).toMatchObject({ status: 'failed', attempts: 1 });
  });

  it('skips a step whose condition is false and still runs its dependents', async () => {
    const runId = await run([
      step(stack, 'S', T.echo, { input: { value: 's' }, when: '{% false %}' }),
      step(stack, 'U', T.echo, { dependsOn: ['S'], input: { value: 'u' } }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(statusOf(done, 'S')).toBe('skipped');
    expect(statusOf(done, 'U')).toBe('succeeded');
    expect(done.status).toBe('complete');
  });

  it('passes upstream outputs into inputs through expressions', async () => {
    const runId = await run([
      step(stack, 'A', T.echo, { input: { value: { n: 41 } } }),
      step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: '{% $outputs.A.value.n + 1 %}' } }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(stepOf(done, 'B').output).toEqual({ value: 42 });
  });

  it('runs independent steps at the same time', async () => {
    const ids = ['W1', 'W2', 'W3', 'W4'];
    const runId = await run(ids.map((id) => step(stack, id, T.sleep, { input: { ms: 400 } })));

    const done = await waitForRun(stack, runId);

    const spans = ids
      .map((id) => stepOf(done, id))
      .map((s) => [Date.parse(s.startedAt ?? ''), Date.parse(s.finishedAt ?? '')]);
    const latestStart = Math.max(...spans.map(([start]) => start ?? Number.NaN));
    const earliestFinish = Math.min(...spans.map(([, finish]) => finish ?? Number.NaN));
    expect(done.status, summary(done)).toBe('complete');
    expect(latestStart).toBeLessThan(earliestFinish);
  });

  it('writes the ledger once when a mutating step is started again by a duplicate or a replay', async () => {
    const entry = `ledger-${Date.now()}`;
    const runId = await run([step(stack, 'L', T.ledger, { input: { entry }, rollbackHint: 'remove the entry' })]);
    await waitForRun(stack, runId);

    const input = stepExecutionInput({ runId, stepId: 'L', generation: 1 });
    const duplicate = await stack.executions.start('step', stepExecutionName(runId, 'L', 1), input);
    const replayName = `${stepExecutionName(runId, 'L', 1)}-replay`;
    const replay = await stack.executions.start('step', replayName, input);
    await stack.executions.idle();

    expect(duplicate.started).toBe(false);
    expect(replay.started).toBe(true);
    // The replay ran (it found the step taken by another execution and stopped), it did not break on its input.
    expect(stack.executions.list().find((e) => e.name === replayName)?.status).toBe('SUCCEEDED');
    expect(ledgerEntries().filter((e) => JSON.stringify(e).includes(entry))).toHaveLength(1);
    expect((await getRun(stack, runId)).status).toBe('complete');
  });

  it('starts a child exactly once when its two parents complete at the same moment', async () => {
    for (let i = 0; i < 15; i++) {
      const runId = await run([
        step(stack, 'P1', T.echo, { input: { value: 1 } }),
        step(stack, 'P2', T.echo, { input: { value: 2 } }),
        step(stack, 'C', T.echo, { dependsOn: ['P1', 'P2'], input: { value: 3 } }),
      ]);
      const done = await waitForRun(stack, runId);
      const events = (await stack.request('GET', `/runs/${runId}/events`)).json as {
        events: { type: string; stepId?: string }[];
      };
      const childStarts = events.events.filter((e) => e.type === 'StepStarted' && e.stepId === 'C');
      const childExecutions = stack.executions.list().filter((e) => e.name === stepExecutionName(runId, 'C', 1));

      expect(done.status, summary(done)).toBe('complete');
      expect(stepOf(done, 'C').attempts).toBe(1);
      expect(childStarts).toHaveLength(1);
      expect(childExecutions).toHaveLength(1);
    }
  });

  it('rejects an invalid submitted plan with 422 and stores nothing', async () => {
    const before = ((await stack.request('GET', '/runs?limit=100')).json as { runs: unknown[] }).runs.length;

    const answer = await stack.request('POST', '/runs', {
      plan: plan('bad', [step(stack, 'A', T.echo, { dependsOn: ['A'], input: { value: 1 } })]),
    });
    const after = ((await stack.request('GET', '/runs?limit=100')).json as { runs: unknown[] }).runs.length;

    expect(answer.status).toBe(422);
    expect(JSON.stringify(answer.json)).toContain('E_SELF_DEPENDENCY');
    expect(after).toBe(before);
  });
});
