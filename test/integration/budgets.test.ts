/**
 * Budgets through the embedded stack (the synthesized state machines): usage reported by conformance.spend is
 * summed once per attempt on steps and runs, the soft threshold is announced once, a run budget crossed by two
 * parallel steps at once ends the run `budget_exhausted` with exactly one ending and no further step started, a
 * step over its own budget fails, and a plan may ask to be paused instead.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Plan } from '../../shared/plan/schema.ts';
import { type AuditEvent, auditLog } from '../support/api-reads.ts';
import { plan, type RunView, step, useTestStack, waitForRun } from '../support/local-stack.ts';

interface Spend {
  tokens: number;
  costUsd: number;
}
type StepUsage = RunView['steps'][number] & { usage: Spend | null };
type UsageView = Omit<RunView, 'steps'> & { usage: Spend; steps: StepUsage[] };
const stack = useTestStack();

const spend = (id: string, tokens: number, costUsd: number, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.spend, { input: { tokens, costUsd }, ...fields });

const events = async (runId: string, type: string): Promise<AuditEvent[]> =>
  (await auditLog(stack, runId)).filter((e) => e.type === type);

const usageOf = (run: UsageView, id: string) => run.steps.find((s) => s.id === id)?.usage;
const withBudget = (p: ReturnType<typeof plan>, budget: Plan['budget']) => ({ ...p, budget });

describe('budgets on the embedded stack', { timeout: 120_000 }, () => {
  it('sums usage per step and per run and announces the soft threshold once', async () => {
    const runId = await stack.startRun({
      plan: withBudget(
        plan('spend under budget', [
          spend('a', 50, 0.25),
          spend('b', 40, 0.5, { dependsOn: ['a'] }),
          spend('c', 5, 0.125, { dependsOn: ['b'] }),
        ]),
        { maxTokens: 100 },
      ),
    });
    const run = (await waitForRun(stack, runId)) as unknown as UsageView;
    expect(run.status).toBe('complete');
    expect(run.usage).toEqual({ tokens: 95, costUsd: 0.875 });
    expect(usageOf(run, 'a')).toEqual({ tokens: 50, costUsd: 0.25 });
    expect(usageOf(run, 'c')).toEqual({ tokens: 5, costUsd: 0.125 });
    // 90 of 100 crossed 80 %, 95 is still past it: one announcement.
    const warnings = await events(runId, 'BudgetThreshold');
    expect(warnings.map((e) => e.detail)).toEqual([{ runId, dimension: 'tokens', limit: 100, spent: 90, warnAt: 0.8 }]);
  });

  it('ends the run budget_exhausted when two parallel steps cross the limit together, starting nothing more', async () => {
    const runId = await stack.startRun({
      plan: withBudget(
        plan('two spenders at once', [
          spend('left', 60, 0),
          spend('right', 60, 0),
          step(stack, 'after', T.echo, { dependsOn: ['left', 'right'], input: { value: 'never' } }),
        ]),
        { maxTokens: 100 },
      ),
    });
    const run = (await waitForRun(stack, runId)) as unknown as UsageView;
    expect(run.status).toBe('failed');
    expect(run.terminal?.reason).toBe('budget_exhausted');
    expect(run.usage).toEqual({ tokens: 120, costUsd: 0 });
    const after = run.steps.find((s) => s.id === 'after');
    expect(after).toMatchObject({ status: 'cancelled', attempts: 0, startedAt: null });
    expect(after?.error?.code).toBe('E_BUDGET_EXHAUSTED');
    expect(run.steps.filter((s) => s.id !== 'after').map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    expect(run.terminal?.evidence.budget).toMatchObject({
      limits: { maxTokens: 100 },
      usage: { tokens: 120, costUsd: 0 },
      exhausted: [{ dimension: 'tokens', limit: 100, spent: 120 }],
    });
    expect(await events(runId, 'RunFinished')).toHaveLength(1);
    expect(await events(runId, 'StepStarted')).toHaveLength(2);
    expect(await events(runId, 'BudgetThreshold')).toHaveLength(1);
  });

  it('fails a step over its own budget without another attempt', async () => {
    const runId = await stack.startRun({
      plan: plan('a step budget', [spend('costly', 10, 0.5, { budget: { maxCostUsd: 0.1 }, maxRetries: 3 })]),
    });
    const run = (await waitForRun(stack, runId)) as unknown as UsageView;
    expect(run.status).toBe('failed');
    const costly = run.steps.find((s) => s.id === 'costly');
    expect(costly).toMatchObject({ status: 'failed', attempts: 1 });
    expect(costly?.error?.code).toBe('E_BUDGET_EXHAUSTED');
    expect(costly?.usage).toEqual({ tokens: 10, costUsd: 0.5 });
    const warnings = await events(runId, 'BudgetThreshold');
    expect(warnings.map((e) => e.detail)).toEqual([
      { runId, stepId: 'costly', dimension: 'costUsd', limit: 0.1, spent: 0.5, warnAt: 0.8 },
    ]);
  });

  it('leaves the run paused when the plan says onExhausted: pause', async () => {
    const runId = await stack.startRun({
      plan: withBudget(
        plan('pause when spent', [
          spend('first', 0, 2),
          step(stack, 'second', T.echo, { dependsOn: ['first'], input: { value: 'later' } }),
        ]),
        { maxCostUsd: 1, onExhausted: 'pause' },
      ),
    });
    const run = await waitForRun(stack, runId, (r) => r.terminal !== undefined);
    expect(run.status).toBe('paused');
    expect(run.terminal?.reason).toBe('budget_exhausted');
    expect(run.steps.find((s) => s.id === 'second')?.attempts).toBe(0);
  });
});
