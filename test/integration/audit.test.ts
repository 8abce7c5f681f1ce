/**
 * The audit trail through the embedded stack (the synthesized state machines): an attempt records the plan
 * revision it ran under and its verdict, and a cancellation records who asked (the embedded API's static token is
 * `local-token`).
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { plan, statusOf, step, useTestStack, waitForRun } from '../support/local-stack.ts';

interface AttemptView {
  attempt: number;
  outcome: string;
  revision?: number;
  verdict?: string;
}

const stack = useTestStack();

async function attemptsOf(runId: string, stepId: string): Promise<AttemptView[]> {
  const { status, json } = await stack.request('GET', `/runs/${runId}/steps/${stepId}`);
  expect(status).toBe(200);
  return (json as { attempts: AttemptView[] }).attempts;
}

describe('audit on the embedded stack', { timeout: 120_000 }, () => {
  it('records the plan revision and the verdict on each attempt', async () => {
    const runId = await stack.startRun({
      plan: plan('attempts with verdicts', [
        step(stack, 'ok', T.echo, { input: { value: 1 } }),
        step(stack, 'bad', T.fail, { input: { message: 'no', retryable: false } }),
      ]),
    });
    await waitForRun(stack, runId);
    expect(await attemptsOf(runId, 'ok')).toMatchObject([
      { attempt: 1, outcome: 'succeeded', revision: 1, verdict: 'pass' },
    ]);
    expect(await attemptsOf(runId, 'bad')).toMatchObject([
      { attempt: 1, outcome: 'failed', revision: 1, verdict: 'fail' },
    ]);
  });

  it('records who cancelled a run', async () => {
    const runId = await stack.startRun({
      plan: plan('cancel me', [step(stack, 'slow', T.sleep, { input: { ms: 20_000 } })]),
    });
    await waitForRun(stack, runId, (run) => statusOf(run, 'slow') === 'running');
    expect((await stack.request('POST', `/runs/${runId}/cancel`)).status).toBe(200);
    const run = await waitForRun(stack, runId);
    expect(run.status).toBe('cancelled');
    expect(run.terminal?.evidence.requestedBy).toBe('local-token');
  });
});
