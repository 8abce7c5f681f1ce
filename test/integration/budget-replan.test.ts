/**
 * The budget replan through the embedded stack (the synthesized state machines, the bus rule, the HTN planner): a
 * plan budget with `onExhausted: "replan"` crossed by conformance.spend gets one cheaper revision (the steps not
 * run capped at a share of the allowance, the budget raised by the engine) and goes on; a second exhaustion, or a
 * planner with nothing to make cheaper, ends the run `budget_exhausted`; two steps crossing at once ask once.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Plan, PlanStep } from '../../shared/plan/schema.ts';
import { type AuditEvent, auditLog } from '../support/api-reads.ts';
import { plan, type RunView, step, useTestStack, waitForRun } from '../support/local-stack.ts';

type UsageView = RunView & { usage: { tokens: number; costUsd: number }; budgetReplan?: Record<string, unknown> };
const stack = useTestStack({ limits: { maxReplans: 3 } });

const spend = (id: string, costUsd: number, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.spend, { input: { tokens: 0, costUsd }, ...fields });

const replanning = (objective: string, steps: PlanStep[]) => ({
  ...plan(objective, steps),
  budget: { maxCostUsd: 1, onExhausted: 'replan' } satisfies Plan['budget'],
});

const events = async (runId: string, type: string): Promise<AuditEvent[]> =>
  (await auditLog(stack, runId)).filter((e) => e.type === type);

async function planAt(runId: string, revision: number): Promise<Plan> {
  const { json } = await stack.request('GET', `/runs/${runId}/plan?revision=${revision}`);
  return (json as { plan: Plan }).plan;
}

describe('the budget replan on the embedded stack', { timeout: 120_000 }, () => {
  it('makes one cheaper revision when the plan budget is crossed, and the run completes under it', async () => {
    const runId = await stack.startRun({
      plan: replanning('spend, then finish cheaper', [
        spend('first', 1.2),
        spend('second', 0.1, { dependsOn: ['first'] }),
      ]),
    });
    const run = (await waitForRun(stack, runId)) as UsageView;
    expect(run.status).toBe('complete');
    expect(run.revision).toBe(2);
    expect(run.usage.costUsd).toBeCloseTo(1.3, 6);
    expect(run.steps.find((s) => s.id === 'second')).toMatchObject({ status: 'succeeded', generation: 2 });
    // Spend is not reset: the revision's budget is what was spent plus half the original limit, set by the engine.
    const revised = await planAt(runId, 2);
    expect(revised.budget).toEqual({ maxCostUsd: 1.7, onExhausted: 'replan' });
    expect(revised.steps.find((s) => s.id === 'second')?.budget).toEqual({ maxCostUsd: 0.5 });
    // The run view says so (the console shows it), and its budget is the revision's: spend against the new budget.
    expect(run.budgetReplan).toEqual({
      trigger: 'budget',
      outcome: 'revised',
      revision: 2,
      reason: expect.stringMatching(/^budget replan: run budget exhausted \(costUsd 1\.2 of 1\)/),
    });
    expect((run as RunView & { budget?: unknown }).budget).toEqual({ maxCostUsd: 1.7, onExhausted: 'replan' });
    const [revisedEvent] = await events(runId, 'PlanRevised');
    expect(revisedEvent?.detail.reason).toMatch(/^budget replan: run budget exhausted \(costUsd 1\.2 of 1\)/);
    expect(await events(runId, 'PlanRevised')).toHaveLength(1);
    expect((await events(runId, 'BudgetExhausted')).map((e) => e.detail)).toEqual([
      { runId, revision: 1, onExhausted: 'replan', exhausted: [{ dimension: 'costUsd', limit: 1, spent: 1.2 }] },
    ]);
  });

  it('ends budget_exhausted when the revision crosses its budget too: the replan is made once', async () => {
    const runId = await stack.startRun({
      plan: replanning('spend twice over', [
        spend('first', 1.2),
        spend('second', 0.6, { dependsOn: ['first'] }),
        step(stack, 'third', T.echo, { dependsOn: ['second'], input: { value: 'never' } }),
      ]),
    });
    const run = await waitForRun(stack, runId);
    expect(run.status).toBe('failed');
    expect(run.terminal?.reason).toBe('budget_exhausted');
    expect(run.revision).toBe(2);
    expect(run.terminal?.evidence.budgetReplan).toEqual({ revision: 2, outcome: 'exhausted_again' });
    expect((run as UsageView).budgetReplan).toMatchObject({ outcome: 'exhausted_again', revision: 2 });
    expect(run.terminal?.evidence.budget).toMatchObject({
      limits: { maxCostUsd: 1.7 },
      exhausted: [{ dimension: 'costUsd', limit: 1.7, spent: 1.8 }],
    });
    expect(run.steps.find((s) => s.id === 'third')?.attempts).toBe(0);
    expect(await events(runId, 'PlanRevised')).toHaveLength(1);
    expect(await events(runId, 'RunFinished')).toHaveLength(1);
  });

  it('falls back to budget_exhausted when the planner has nothing cheaper to offer', async () => {
    const runId = await stack.startRun({
      plan: replanning('nothing to cheapen', [
        spend('first', 1.2),
        spend('second', 0.1, { dependsOn: ['first'], budget: { maxCostUsd: 0.1 } }),
      ]),
    });
    const run = await waitForRun(stack, runId);
    expect(run.status).toBe('failed');
    expect(run.terminal?.reason).toBe('budget_exhausted');
    expect(run.revision).toBe(1);
    expect(run.terminal?.evidence.budgetReplan).toMatchObject({ outcome: 'declined', code: 'E_NO_CHANGE' });
    expect((run as UsageView).budgetReplan).toMatchObject({
      trigger: 'budget',
      outcome: 'declined',
      code: 'E_NO_CHANGE',
    });
    expect(run.terminal?.evidence.budget).toMatchObject({
      exhausted: [{ dimension: 'costUsd', limit: 1, spent: 1.2 }],
    });
    expect(run.steps.find((s) => s.id === 'second')).toMatchObject({ status: 'cancelled', attempts: 0 });
    expect(await events(runId, 'PlanRevised')).toHaveLength(0);
  });

  it('asks for one replan when two parallel steps cross the budget together', async () => {
    const runId = await stack.startRun({
      plan: replanning('two spenders at once', [
        spend('left', 0.6),
        spend('right', 0.6),
        spend('after', 0.2, { dependsOn: ['left', 'right'] }),
      ]),
    });
    const run = (await waitForRun(stack, runId)) as UsageView;
    expect(run.status).toBe('complete');
    expect(run.revision).toBe(2);
    expect(run.usage.costUsd).toBeCloseTo(1.4, 6);
    expect(await events(runId, 'BudgetExhausted')).toHaveLength(1);
    expect(await events(runId, 'PlanRevised')).toHaveLength(1);
    expect(await events(runId, 'RunFinished')).toHaveLength(1);
    expect(run.steps.map((s) => [s.id, s.status])).toEqual([
      ['left', 'succeeded'],
      ['right', 'succeeded'],
      ['after', 'succeeded'],
    ]);
  });
});
