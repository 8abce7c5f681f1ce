/**
 * Expected-failure checkpoints end to end (issue 12 §3), through the synthesized ASL on the embedded runtime: a step
 * that must fail succeeds when its capability fails the expected way, with the failure as its output and as evidence
 * on the attempt; a capability that succeeds instead fails it with E_EXPECTED_FAILURE; another failure stays its own.
 * And a criterion's stricter outputSchema is checked: "value must be exactly 2" no longer passes with 1.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { plan, step, stepOf, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

const stack = useTestStack();

const run = (steps: Parameters<typeof plan>[1]) => stack.startRun({ plan: plan('reproduce bug 123', steps) });

async function attemptsOf(runId: string, stepId: string) {
  const { status, json } = await stack.request('GET', `/runs/${runId}/steps/${stepId}`);
  expect(status).toBe(200);
  return (json as { attempts: { outcome: string; evidence: Record<string, unknown> }[] }).attempts;
}

const repro = (message: string, expected: { code?: string; message?: string }) =>
  step(stack, 'repro', T.fail, {
    input: { message, retryable: false },
    expect: { failure: expected },
    maxRetries: 2,
  });

describe('an expected-failure step', () => {
  it('succeeds when the capability fails as expected, its failure the output and the evidence', async () => {
    const runId = await run([
      repro('bug 123 reproduced: total is 1, expected 2', { code: '^E_CONFORMANCE_FAIL$', message: 'bug 123' }),
      step(stack, 'report', T.echo, { dependsOn: ['repro'], input: { value: '{% $outputs.repro.failure.code %}' } }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('complete');
    const failure = { code: 'E_CONFORMANCE_FAIL', message: 'bug 123 reproduced: total is 1, expected 2' };
    expect(stepOf(done, 'repro')).toMatchObject({ status: 'succeeded', attempts: 1, output: { failure } });
    expect(stepOf(done, 'report').output).toEqual({ value: 'E_CONFORMANCE_FAIL' });
    const [attempt, ...more] = await attemptsOf(runId, 'repro');
    expect(more).toEqual([]);
    expect(attempt?.outcome).toBe('succeeded');
    expect(attempt?.evidence).toMatchObject({
      verdict: 'pass',
      expectedFailure: { failure, expected: { code: '^E_CONFORMANCE_FAIL$', message: 'bug 123' } },
    });
  });

  it('fails with E_EXPECTED_FAILURE when the capability succeeds instead, without a retry', async () => {
    const runId = await run([
      step(stack, 'repro', T.echo, { input: { value: 'fine' }, expect: { failure: {} }, maxRetries: 2 }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'repro')).toMatchObject({ status: 'failed', attempts: 1 });
    expect(stepOf(done, 'repro').error).toMatchObject({ code: 'E_EXPECTED_FAILURE', retryable: false });
    expect((await attemptsOf(runId, 'repro'))[0]?.evidence).toMatchObject({ verdict: 'fail' });
  });

  it('fails with the capability own error when it fails another way', async () => {
    const runId = await run([repro('something else broke', { message: 'bug 123' })]);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'repro').error).toMatchObject({ code: 'E_CONFORMANCE_FAIL', message: 'something else broke' });
  });
});

describe('successCriteria.outputSchema', () => {
  it('fails a step whose output meets the contract but not the stricter criterion', async () => {
    const exactlyTwo = {
      description: 'value must be exactly 2',
      outputSchema: { properties: { value: { const: 2 } } },
    };
    const runId = await run([
      step(stack, 'one', T.echo, { input: { value: 1 }, successCriteria: exactlyTwo, maxRetries: 0 }),
      step(stack, 'two', T.echo, { input: { value: 2 }, successCriteria: exactlyTwo }),
    ]);

    const done = await waitForRun(stack, runId);

    expect(stepOf(done, 'one')).toMatchObject({ status: 'failed', error: { code: 'E_ASSERTION_FAILED' } });
    expect(stepOf(done, 'two')).toMatchObject({ status: 'succeeded', output: { value: 2 } });
  });
});
