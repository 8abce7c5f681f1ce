import { describe, expect, it } from 'vitest';
import { budgetReplanText, spendText } from '../../../console/js/pages/spend.js';

const text = spendText as (usage: unknown, budget: unknown) => string;

describe('console: spend against budget', () => {
  it('shows spend against each limit and marks the one passed', () => {
    expect(text({ tokens: 120, costUsd: 0.5 }, { maxTokens: 100, maxCostUsd: 1 })).toBe(
      'spend 120 / 100 tokens (over) · $0.50 / $1.00',
    );
  });

  it('shows the spend against the budget in force after a budget replan (never reset)', () => {
    expect(text({ tokens: 0, costUsd: 1.3 }, { maxCostUsd: 1.7 })).toBe('spend $1.30 / $1.70');
  });

  it('shows spend without a budget, and nothing when nothing was spent and there is no budget', () => {
    expect(text({ tokens: 7, costUsd: 0 }, undefined)).toBe('spend 7 tokens');
    expect(text({ tokens: 0, costUsd: 0 }, undefined)).toBe('');
    expect(text(undefined, undefined)).toBe('');
  });
});

describe('console: the budget replan', () => {
  it('says nothing for a run that asked for no budget replan', () => {
    expect(budgetReplanText(undefined)).toBeNull();
  });

  it('names the revision a budget replan made, with its reason and figures', () => {
    const reason = 'budget replan: run budget exhausted (costUsd 1.2 of 1); a cheaper plan (capped second)';
    expect(budgetReplanText({ trigger: 'budget', outcome: 'revised', revision: 2, reason })).toEqual({
      text: 'budget replan → revision 2',
      detail: reason,
    });
    expect(budgetReplanText({ trigger: 'budget', outcome: 'exhausted_again', revision: 2, reason })?.text).toBe(
      'budget replan → revision 2, exhausted again',
    );
  });

  it('says a budget revision was rejected, expired or declined, with the code', () => {
    const rejected = { trigger: 'budget', outcome: 'rejected', code: 'E_REVISION_REJECTED', message: 'no' };
    expect(budgetReplanText(rejected)).toEqual({
      text: 'budget replan rejected by a person',
      detail: 'E_REVISION_REJECTED: no',
    });
    const expired = { trigger: 'budget', outcome: 'expired', code: 'E_APPROVAL_EXPIRED', message: 'late' };
    expect(budgetReplanText(expired)?.text).toBe('budget replan expired without a decision');
    const declined = { trigger: 'budget', outcome: 'declined', code: 'E_NO_CHANGE', message: 'nothing' };
    expect(budgetReplanText(declined)?.text).toBe('budget replan declined');
  });
});
