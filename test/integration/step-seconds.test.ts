/**
 * The time dimension of budgets through the synthesized state machines on the embedded runtime (issue 12 §1): a step's
 * `budget.maxSeconds` bounds its attempt while the capability runs (the call is abandoned at the limit and the step
 * fails with E_BUDGET_EXHAUSTED and the figures), and a plan's `maxSeconds` crossed while steps run abandons the
 * running ones, closes the unstarted ones and ends the run `budget_exhausted`.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Plan } from '../../shared/plan/schema.ts';
import { auditLog } from '../support/api-reads.ts';
import { plan, type RunView, step, stepOf, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

const stack = useTestStack();

interface Attempt {
  outcome: string;
  error?: { code: string; details?: unknown };
  evidence: Record<string, unknown>;
}

async function attemptsOf(runId: string, stepId: string): Promise<Attempt[]> {
  const { status, json } = await stack.request('GET', `/runs/${runId}/steps/${stepId}`);
  expect(status).toBe(200);
  return (json as { attempts: Attempt[] }).attempts;
}

const sleep = (id: string, ms: number, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.sleep, { input: { ms }, ...fields });

type ErrorWithDetails = { code: string; details?: { scope?: string; exhausted?: unknown[] } };
const errorOf = (run: RunView, id: string) => stepOf(run, id).error as ErrorWithDetails | null;

describe("a step's budget.maxSeconds while it runs", { timeout: 120_000 }, () => {
  it('abandons a 3 s call at 1 s and fails the step with E_BUDGET_EXHAUSTED and the figures, without a retry', async () => {
    const runId = await stack.startRun({
      plan: plan('a slow step on a short budget', [sleep('slow', 3000, { budget: { maxSeconds: 1 }, maxRetries: 3 })]),
    });
    const run = await waitForRun(stack, runId);

    expect(run.status, summary(run)).toBe('failed');
    expect(stepOf(run, 'slow')).toMatchObject({ status: 'failed', attempts: 1, output: null });
    const error = errorOf(run, 'slow');
    expect(error?.code).toBe('E_BUDGET_EXHAUSTED');
    expect(error?.details?.scope).toBe('step');
    expect(error?.details?.exhausted).toEqual([
      { dimension: 'seconds', limit: 1, spent: expect.any(Number) as number },
    ]);
    const [attempt, ...more] = await attemptsOf(runId, 'slow');
    expect(more).toEqual([]);
    expect(attempt).toMatchObject({ outcome: 'failed', error: { code: 'E_BUDGET_EXHAUSTED' } });
    // Abandoned by the executor at the limit, not judged after the sleep ended.
    expect(attempt?.evidence).toMatchObject({ abandoned: true, binding: 'builtin' });
  });

  it('leaves a call that ends within the budget alone', async () => {
    const runId = await stack.startRun({
      plan: plan('a quick step on a budget', [sleep('quick', 10, { budget: { maxSeconds: 30 } })]),
    });
    const run = await waitForRun(stack, runId);
    expect(run.status, summary(run)).toBe('complete');
    expect(stepOf(run, 'quick').output).toEqual({ sleptMs: expect.any(Number) as number });
  });
});

describe("a step's budget.maxSeconds over its retries", { timeout: 120_000 }, () => {
  const flaky = (id: string, failures: number, maxSeconds: number) =>
    step(stack, id, T.flaky, {
      input: { key: `${id}-${Date.now()}`, failures },
      maxRetries: 3,
      budget: { maxSeconds },
    });

  it('does not schedule a retry whose backoff would end past the budget', async () => {
    // The engine's backoff before attempt 2 is 1 s (the test stack only shortens the wait itself): no time is left.
    const runId = await stack.startRun({ plan: plan('a flaky step on 1 s', [flaky('short', 5, 1)]) });
    const run = await waitForRun(stack, runId);

    expect(stepOf(run, 'short')).toMatchObject({ status: 'failed', attempts: 1 });
    expect(errorOf(run, 'short')).toMatchObject({
      code: 'E_BUDGET_EXHAUSTED',
      details: { scope: 'step', backoffSeconds: 1, exhausted: [{ dimension: 'seconds', limit: 1 }] },
    });
    expect(await attemptsOf(runId, 'short')).toHaveLength(1);
  });

  it('retries while the budget leaves time for it', async () => {
    const runId = await stack.startRun({ plan: plan('a flaky step on 60 s', [flaky('roomy', 2, 60)]) });
    const run = await waitForRun(stack, runId);

    expect(run.status, summary(run)).toBe('complete');
    expect(stepOf(run, 'roomy')).toMatchObject({ status: 'succeeded', attempts: 3, output: { attempts: 3 } });
  });
});

describe("a plan's maxSeconds crossed while steps run", { timeout: 120_000 }, () => {
  it('abandons the running steps, starts nothing more and ends the run budget_exhausted', async () => {
    const budget: Plan['budget'] = { maxSeconds: 5 };
    const runId = await stack.startRun({
      plan: {
        ...plan('two long sleeps on a short run budget', [
          sleep('left', 30_000),
          sleep('right', 30_000),
          step(stack, 'after', T.echo, { dependsOn: ['left', 'right'], input: { value: 'never' } }),
        ]),
        budget,
      },
    });
    const run = await waitForRun(stack, runId);

    expect(run.status, summary(run)).toBe('failed');
    expect(run.terminal?.reason).toBe('budget_exhausted');
    expect(run.terminal?.evidence.budget).toMatchObject({
      limits: { maxSeconds: 5 },
      exhausted: [{ dimension: 'seconds', limit: 5 }],
    });
    for (const id of ['left', 'right']) {
      expect(stepOf(run, id)).toMatchObject({ status: 'failed', attempts: 1 });
      expect(errorOf(run, id)).toMatchObject({ code: 'E_BUDGET_EXHAUSTED', details: { scope: 'run' } });
      expect((await attemptsOf(runId, id))[0]?.evidence).toMatchObject({ abandoned: true });
    }
    // Its upstream failed for want of time: it is blocked, never started.
    expect(stepOf(run, 'after')).toMatchObject({ status: 'blocked', attempts: 0, startedAt: null });
    const log = await auditLog(stack, runId);
    expect(log.filter((e) => e.type === 'StepStarted')).toHaveLength(2);
    expect(log.filter((e) => e.type === 'RunFinished')).toHaveLength(1);
  });

  it('abandons them too under onExhausted: pause, and leaves the run paused', async () => {
    const runId = await stack.startRun({
      plan: {
        ...plan('a long sleep, paused when out of time', [sleep('long', 30_000)]),
        budget: { maxSeconds: 3, onExhausted: 'pause' },
      },
    });
    const run = await waitForRun(stack, runId, (r) => r.terminal !== undefined);

    expect(run.status, summary(run)).toBe('paused');
    expect(run.terminal?.reason).toBe('budget_exhausted');
    expect(errorOf(run, 'long')).toMatchObject({ code: 'E_BUDGET_EXHAUSTED', details: { scope: 'run' } });
  });
});
