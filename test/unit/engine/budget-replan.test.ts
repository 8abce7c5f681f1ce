import { describe, expect, it } from 'vitest';
import {
  BUDGET_REPLAN_KEY,
  budgetReplanRequest,
  budgetReplanState,
  budgetReplanView,
  budgetScope,
  decideBudgetExhaustion,
  isRunBudgetStop,
  RUN_BUDGET_STOP,
} from '../../../shared/engine/budget-replan.ts';
import type { PlanStep, StepError, StepStatus } from '../../../shared/plan/schema.ts';

const stop: StepError = {
  code: 'E_BUDGET_EXHAUSTED',
  message: 'not started',
  retryable: false,
  details: RUN_BUDGET_STOP,
};

describe('budgetReplanRequest', () => {
  it('raises an exhausted limit to what was spent plus half the original, and tells the allowance', () => {
    const request = budgetReplanRequest({ maxCostUsd: 1, onExhausted: 'replan' }, { tokens: 0, costUsd: 1.2 }, 5);
    expect(request.revised).toEqual({ maxCostUsd: 1.7, onExhausted: 'replan' });
    expect(request.allowance).toEqual({ costUsd: 0.5 });
    expect(request.exhausted).toEqual([{ dimension: 'costUsd', limit: 1, spent: 1.2 }]);
  });

  it('keeps a limit that still has the allowance left, and rounds tokens and seconds up', () => {
    const request = budgetReplanRequest(
      { maxTokens: 100, maxCostUsd: 10, maxSeconds: 60 },
      { tokens: 101, costUsd: 2 },
      61.5,
    );
    expect(request.revised).toEqual({ maxTokens: 151, maxCostUsd: 10, maxSeconds: 92 });
    expect(request.allowance).toEqual({ tokens: 50, costUsd: 8, seconds: 30.5 });
    expect(request.exhausted.map((f) => f.dimension)).toEqual(['tokens', 'seconds']);
  });
});

describe('decideBudgetExhaustion', () => {
  const none = { kind: 'none' } as const;

  it('fails under fail (the default) and pauses under pause, whatever replans are left', () => {
    expect(decideBudgetExhaustion({ policy: undefined, replan: none, replansLeft: 3 })).toEqual({ action: 'fail' });
    expect(decideBudgetExhaustion({ policy: 'pause', replan: none, replansLeft: 3 })).toEqual({ action: 'pause' });
  });

  it('asks for the replan under replan when none was made and a replan is left', () => {
    expect(decideBudgetExhaustion({ policy: 'replan', replan: none, replansLeft: 1 })).toEqual({ action: 'replan' });
  });

  it('falls back to fail after the one budget replan, a decline, or with no replan left', () => {
    expect(decideBudgetExhaustion({ policy: 'replan', replan: { kind: 'made', revision: 2 }, replansLeft: 2 })).toEqual(
      {
        action: 'fail',
        replan: { revision: 2, outcome: 'exhausted_again' },
      },
    );
    const declined = { kind: 'declined', code: 'E_NO_CHANGE', message: 'nothing' } as const;
    expect(decideBudgetExhaustion({ policy: 'replan', replan: declined, replansLeft: 2 })).toEqual({
      action: 'fail',
      replan: { outcome: 'declined', code: 'E_NO_CHANGE', message: 'nothing' },
    });
    expect(decideBudgetExhaustion({ policy: 'replan', replan: none, replansLeft: 0 })).toMatchObject({
      action: 'fail',
      replan: { outcome: 'declined', code: 'E_REPLAN_LIMIT' },
    });
  });

  it('says rejected or expired when the budget revision waited for a person who did not approve it', () => {
    for (const [code, outcome] of [
      ['E_REVISION_REJECTED', 'rejected'],
      ['E_APPROVAL_EXPIRED', 'expired'],
    ] as const) {
      const replan = { kind: 'declined', code, message: 'revision 2 (adding tool:x) ...' } as const;
      expect(decideBudgetExhaustion({ policy: 'replan', replan, replansLeft: 2 })).toEqual({
        action: 'fail',
        replan: { outcome, code, message: replan.message },
      });
    }
  });
});

describe('budgetReplanState', () => {
  it('reads the budget replan from the replan log first, then from the declines', () => {
    const log = [
      { failure: 'a#1', revision: 2 },
      { failure: BUDGET_REPLAN_KEY, revision: 3 },
    ];
    const declines = [{ failure: BUDGET_REPLAN_KEY, code: 'E_NO_CHANGE', message: 'm' }];
    expect(budgetReplanState(log, declines)).toEqual({ kind: 'made', revision: 3 });
    expect(budgetReplanState([{ failure: 'a#1', revision: 2 }], declines)).toEqual({
      kind: 'declined',
      code: 'E_NO_CHANGE',
      message: 'm',
    });
    expect(budgetReplanState(undefined, [{ failure: 'a#1', code: 'E_X', message: '' }])).toEqual({ kind: 'none' });
  });
});

describe('budgetScope', () => {
  const s = (id: string, dependsOn: string[] = []): PlanStep => ({ id, title: id, target: 'tool:t', dependsOn });

  it('holds the steps the budget stopped and their downstream, not finished steps or failures of their own', () => {
    const steps = [s('done'), s('own'), s('closed', ['done']), s('waiting', ['closed']), s('later', ['own'])];
    const states = new Map<string, { status: StepStatus; error?: StepError }>([
      ['done', { status: 'succeeded' }],
      ['own', { status: 'failed', error: { code: 'E_X', message: 'boom', retryable: false } }],
      ['closed', { status: 'cancelled', error: stop }],
      ['waiting', { status: 'pending' }],
      ['later', { status: 'blocked' }],
    ]);
    expect(budgetScope({ steps }, states).steps).toEqual(['closed', 'waiting']);
  });

  it('tells a run budget stop from a step over its own budget', () => {
    expect(isRunBudgetStop(stop)).toBe(true);
    expect(isRunBudgetStop({ ...stop, details: { exhausted: [] } })).toBe(false);
    expect(isRunBudgetStop({ ...stop, details: { scope: 'step', exhausted: [] } })).toBe(false);
    expect(isRunBudgetStop({ ...stop, details: { scope: 'run', exhausted: [] } })).toBe(true);
    expect(isRunBudgetStop({ ...stop, code: 'E_CANCELLED' })).toBe(false);
    expect(isRunBudgetStop(undefined)).toBe(false);
  });
});

describe('budgetReplanView', () => {
  const made = [
    { failure: BUDGET_REPLAN_KEY, revision: 2, reason: 'budget replan: run budget exhausted (costUsd 1.2 of 1)' },
  ];

  it('shows nothing for a run that asked for no budget replan', () => {
    expect(budgetReplanView([{ failure: 'a#1', revision: 2, reason: 'replan' }], [], undefined)).toBeUndefined();
  });

  it('names the revision made, and says when the run was exhausted again under it', () => {
    expect(budgetReplanView(made, [], undefined)).toEqual({
      trigger: 'budget',
      outcome: 'revised',
      revision: 2,
      reason: made[0]?.reason,
    });
    const ended = { budgetReplan: { revision: 2, outcome: 'exhausted_again' } };
    expect(budgetReplanView(made, [], ended)).toMatchObject({ outcome: 'exhausted_again', revision: 2 });
  });

  it('says why no revision was made: rejected, expired or declined', () => {
    const declines = [{ failure: BUDGET_REPLAN_KEY, code: 'E_REVISION_REJECTED', message: 'revision 2 was rejected' }];
    expect(budgetReplanView(undefined, declines, undefined)).toEqual({
      trigger: 'budget',
      outcome: 'rejected',
      code: 'E_REVISION_REJECTED',
      message: 'revision 2 was rejected',
    });
  });
});
