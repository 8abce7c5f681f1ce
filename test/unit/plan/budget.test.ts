import { describe, expect, it } from 'vitest';
import { MAX_STEP_BUDGET_SECONDS } from '../../../shared/config/defaults.ts';
import { planJsonSchema } from '../../../shared/plan/schema.ts';
import { validate } from '../../../shared/plan/validate.ts';
import { catalog, plan, step, where } from './plan-testkit.ts';

describe('validate: budgets', () => {
  it('accepts a plan budget and a step budget within it', () => {
    const p = plan([step('a', [], { budget: { maxTokens: 100, maxSeconds: 30 } })], {
      budget: { maxTokens: 1000, maxCostUsd: 0.5, warnAt: 0.9, onExhausted: 'pause' },
    });
    expect(validate(p, catalog)).toMatchObject({ valid: true });
  });

  it('E_BUDGET for a budget that names no limit', () => {
    const p = plan([step('a', [], { budget: { warnAt: 0.5 } })], { budget: {} });
    expect(where(validate(p, catalog))).toEqual(['E_BUDGET /budget', 'E_BUDGET /steps/0/budget']);
  });

  it('E_BUDGET for onExhausted on a step and for a step limit above the plan limit', () => {
    const p = plan([step('a', [], { budget: { maxCostUsd: 2, onExhausted: 'pause' } })], {
      budget: { maxCostUsd: 1 },
    });
    expect(where(validate(p, catalog))).toEqual([
      'E_BUDGET /steps/0/budget/onExhausted',
      'E_BUDGET /steps/0/budget/maxCostUsd',
    ]);
  });

  it('E_BUDGET for a step maxSeconds above what one step executor invocation can honour', () => {
    const over = plan([step('a', [], { budget: { maxSeconds: MAX_STEP_BUDGET_SECONDS + 1 } })], {
      budget: { maxSeconds: 3600 },
    });
    expect(where(validate(over, catalog))).toEqual(['E_BUDGET /steps/0/budget/maxSeconds']);
    const at = plan([step('a', [], { budget: { maxSeconds: MAX_STEP_BUDGET_SECONDS } })], {
      budget: { maxSeconds: 3600 },
    });
    expect(validate(at, catalog)).toMatchObject({ valid: true });
  });

  it('E_FIELD for a malformed budget (negative, fractional tokens, unknown key)', () => {
    const bad = { maxTokens: 1.5, maxCostUsd: -1, colour: 'red' } as never;
    expect(where(validate(plan([step('a')], { budget: bad }), catalog)).sort()).toEqual([
      'E_FIELD /budget/colour',
      'E_FIELD /budget/maxCostUsd',
      'E_FIELD /budget/maxTokens',
    ]);
  });

  it('publishes budget in the JSON Schema of the plan and of a step', () => {
    const schema = planJsonSchema() as { properties: Record<string, unknown> };
    expect(schema.properties.budget).toBeDefined();
    expect(JSON.stringify(schema)).toContain('maxCostUsd');
  });

  it('accepts onExhausted replan on the plan budget and refuses it on a step budget', () => {
    const p = plan([step('a', [], { budget: { maxCostUsd: 0.5, onExhausted: 'replan' } })], {
      budget: { maxCostUsd: 1, onExhausted: 'replan' },
    });
    expect(where(validate(p, catalog))).toEqual(['E_BUDGET /steps/0/budget/onExhausted']);
    const ok = plan([step('a')], { budget: { maxCostUsd: 1, onExhausted: 'replan' } });
    expect(validate(ok, catalog)).toMatchObject({ valid: true });
  });

  it('lists replan among the onExhausted policies of the JSON Schema (cairn schema)', () => {
    const schema = planJsonSchema() as { properties: { budget: { properties: { onExhausted: { enum: string[] } } } } };
    expect(schema.properties.budget.properties.onExhausted.enum).toEqual(['fail', 'pause', 'replan']);
  });
});
