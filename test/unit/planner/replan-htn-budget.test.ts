import { describe, expect, it } from 'vitest';
import { budgetReplanRequest, RUN_BUDGET_STOP } from '../../../shared/engine/budget-replan.ts';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import type { Plan, PlanStep, StepError, StepStatus } from '../../../shared/plan/schema.ts';
import { plannerErrorCode } from '../../../shared/planner/errors.ts';
import { createHtnPlanModel } from '../../../shared/planner/htn/model.ts';
import { proposeRevision } from '../../../shared/planner/replan/revise.ts';
import type { PlanModel, PlanModelRequest } from '../../../shared/ports/plan-model.ts';
import { capability } from './fixtures.ts';

const TARGET = 'tool:test.work';
const catalog = loadCatalog({ capabilities: [capability(TARGET)] });
const stopped: StepError = {
  code: 'E_BUDGET_EXHAUSTED',
  message: 'not started',
  retryable: false,
  details: RUN_BUDGET_STOP,
};

const step = (id: string, dependsOn: string[] = [], fields: Partial<PlanStep> = {}): PlanStep => {
  const c = capability(TARGET);
  return {
    id,
    title: id,
    target: TARGET,
    dependsOn,
    inputSchema: c.inputSchema,
    outputSchema: c.outputSchema,
    ...fields,
  };
};

const previous = (steps: PlanStep[]): Plan => ({
  schemaVersion: 1,
  revision: 1,
  objective: 'spend carefully',
  budget: { maxCostUsd: 1, onExhausted: 'replan' },
  steps,
});

/** Records: `done` steps succeeded, every other one closed by the run's budget. */
const records = (plan: Plan, done: string[]) =>
  plan.steps.map((s) => {
    const status: StepStatus = done.includes(s.id) ? 'succeeded' : 'cancelled';
    return {
      stepId: s.id,
      status,
      attempts: 1,
      output: { value: 'x' },
      error: status === 'cancelled' ? stopped : null,
    };
  });

const budget = budgetReplanRequest({ maxCostUsd: 1, onExhausted: 'replan' }, { tokens: 0, costUsd: 1.2 }, 1);

function revise(plan: Plan, done: string[], model: PlanModel = createHtnPlanModel()) {
  return proposeRevision({ model, catalog }, { previous: plan, records: records(plan, done), budget });
}

describe('the HTN budget replan', () => {
  it('caps each step not run at an equal share of the allowance, and the engine sets the budget', async () => {
    const plan = previous([step('a'), step('b', ['a']), step('c', ['a'])]);
    const outcome = await revise(plan, ['a']);
    expect(outcome.change).toEqual({ kind: 'budget', dropped: [], capped: ['b', 'c'] });
    expect(outcome.revision.budget).toEqual({ maxCostUsd: 1.7, onExhausted: 'replan' });
    expect(outcome.revision.steps.map((s) => [s.id, s.budget])).toEqual([
      ['a', undefined],
      ['b', { maxCostUsd: 0.25 }],
      ['c', { maxCostUsd: 0.25 }],
    ]);
    expect(outcome.kept).toEqual(['a']);
    expect(outcome.changed).toEqual(['b', 'c']);
    expect(outcome.revision.rationale).toMatch(/^HTN budget replan: .*costUsd 1\.2 of 1.*capped b, c/);
  });

  it('drops optional steps not run (onFailure continue) that nothing waits for', async () => {
    const plan = previous([step('a'), step('extra', ['a'], { onFailure: 'continue' }), step('b', ['a'])]);
    const outcome = await revise(plan, ['a']);
    expect(outcome.change).toEqual({ kind: 'budget', dropped: ['extra'], capped: ['b'] });
    expect(outcome.removed).toEqual(['extra']);
    expect(outcome.revision.steps.find((s) => s.id === 'b')?.budget).toEqual({ maxCostUsd: 0.5 });
  });

  it('answers E_NO_CHANGE when every step left is within its share already', async () => {
    const plan = previous([step('a'), step('b', ['a'], { budget: { maxCostUsd: 0.1 } })]);
    const error = await revise(plan, ['a']).catch((e: unknown) => e);
    expect(plannerErrorCode(error)).toBe('E_NO_CHANGE');
  });

  it('keeps the engine budget whatever budget a model proposes, and tells the model the allowance', async () => {
    const calls: PlanModelRequest[] = [];
    const greedy: PlanModel = {
      name: 'greedy',
      proposePlan: async (request) => {
        calls.push(request);
        const prior = request.previousPlan as Plan;
        return {
          ...prior,
          budget: { maxCostUsd: 1000 },
          steps: prior.steps.map((s) => ({ ...s, title: `${s.title}!` })),
        };
      },
    };
    const plan = previous([step('a'), step('b', ['a'])]);
    const outcome = await revise(plan, ['a'], greedy).catch((e: unknown) => e);
    // Retitling the finished step breaks the scope: only what has not run may change.
    expect(plannerErrorCode(outcome)).toBe('E_REPLAN_REJECTED');
    expect(calls[0]?.budget?.allowance).toEqual({ costUsd: 0.5 });
    expect(calls[0]?.scope?.steps).toEqual(['b']);
    const fair: PlanModel = {
      name: 'fair',
      proposePlan: async (request) => {
        const prior = request.previousPlan as Plan;
        return { ...prior, budget: { maxCostUsd: 1000 }, steps: prior.steps.filter((s) => s.id === 'a') };
      },
    };
    const revised = await revise(plan, ['a'], fair);
    expect(revised.revision.budget).toEqual({ maxCostUsd: 1.7, onExhausted: 'replan' });
    expect(revised.removed).toEqual(['b']);
  });
});
