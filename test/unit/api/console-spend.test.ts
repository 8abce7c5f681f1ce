import { describe, expect, it } from 'vitest';
// @ts-expect-error: the console is plain browser JavaScript without type declarations
import { spendText } from '../../../console/js/pages/spend.js';

const text = spendText as (usage: unknown, budget: unknown) => string;

describe('console: spend against budget', () => {
  it('shows spend against each limit and marks the one passed', () => {
    expect(text({ tokens: 120, costUsd: 0.5 }, { maxTokens: 100, maxCostUsd: 1 })).toBe(
      'spend 120 / 100 tokens (over) · $0.50 / $1.00',
    );
  });

  it('shows spend without a budget, and nothing when nothing was spent and there is no budget', () => {
    expect(text({ tokens: 7, costUsd: 0 }, undefined)).toBe('spend 7 tokens');
    expect(text({ tokens: 0, costUsd: 0 }, undefined)).toBe('');
    expect(text(undefined, undefined)).toBe('');
  });
});
