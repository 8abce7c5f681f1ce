import { describe, expect, it } from 'vitest';
import { parsePrices } from '../../../shared/config/prices.ts';
import { checkBudget, describeExhaustion, priceUsage, secondsBetween, spendOf } from '../../../shared/engine/budget.ts';
import { reportedUsage } from '../../../shared/engine/usage.ts';

describe('priceUsage', () => {
  const prices = {
    'model-a': { inputPerMillion: 3, outputPerMillion: 15 },
    'tool:x': { inputPerMillion: 1, outputPerMillion: 1 },
  };

  it('prices tokens by the first key the table knows (model before target)', () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 100_000 };
    expect(priceUsage(usage, prices, ['model-a', 'tool:x'])).toEqual({ ...usage, costUsd: 4.5 });
    expect(priceUsage(usage, prices, [undefined, 'tool:x'])).toEqual({ ...usage, costUsd: 1.1 });
  });

  it('keeps a reported cost and leaves unpriced usage without one', () => {
    expect(priceUsage({ inputTokens: 5, outputTokens: 0, costUsd: 0.2 }, prices, ['model-a']).costUsd).toBe(0.2);
    expect(priceUsage({ inputTokens: 5, outputTokens: 0 }, prices, ['other'])).toEqual({
      inputTokens: 5,
      outputTokens: 0,
    });
  });
});

describe('checkBudget', () => {
  it('reports limits at or past the soft threshold and the hard limit', () => {
    const check = checkBudget({ maxTokens: 100, maxCostUsd: 1 }, { tokens: 80, costUsd: 1 }, undefined);
    expect(check.warned.map((f) => f.dimension)).toEqual(['tokens', 'costUsd']);
    expect(check.exhausted).toEqual([{ dimension: 'costUsd', limit: 1, spent: 1 }]);
    expect(describeExhaustion('run', check.exhausted)).toBe('run budget exhausted: costUsd 1 of 1');
  });

  it('honours warnAt and checks seconds only when an elapsed time is given', () => {
    const budget = { maxSeconds: 10, maxTokens: 100, warnAt: 0.5 };
    expect(checkBudget(budget, { tokens: 49, costUsd: 0 }, undefined).warned).toEqual([]);
    expect(checkBudget(budget, { tokens: 50, costUsd: 0 }, 12).exhausted).toEqual([
      { dimension: 'seconds', limit: 10, spent: 12 },
    ]);
  });

  it('says nothing without a budget', () => {
    expect(checkBudget(undefined, { tokens: 1e9, costUsd: 1e9 }, 1e9).exhausted).toEqual([]);
  });
});

describe('spend helpers', () => {
  it('sums tokens and measures seconds', () => {
    expect(spendOf({ inputTokens: 3, outputTokens: 4 })).toEqual({ tokens: 7, costUsd: 0 });
    expect(secondsBetween('2026-01-01T00:00:00Z', '2026-01-01T00:00:02.500Z')).toBe(2.5);
    expect(secondsBetween(undefined, '2026-01-01T00:00:00Z')).toBeUndefined();
  });
});

describe('reportedUsage', () => {
  it('reads counts and a cost, with tokens as a total', () => {
    expect(reportedUsage({ tokens: 10, costUsd: 0.5 })).toEqual({ inputTokens: 10, outputTokens: 0, costUsd: 0.5 });
    expect(reportedUsage({ inputTokens: 2, outputTokens: 3 })).toEqual({ inputTokens: 2, outputTokens: 3 });
  });

  it('refuses what is not a usage', () => {
    for (const bad of [null, [], 'x', { tokens: -1 }, { tokens: 1.5 }, { costUsd: -0.1 }, { other: 1 }])
      expect(reportedUsage(bad)).toBeUndefined();
  });
});

describe('parsePrices', () => {
  it('reads a table and names what is wrong', () => {
    expect(parsePrices('{"m":{"inputPerMillion":1,"outputPerMillion":2}}')).toEqual({
      m: { inputPerMillion: 1, outputPerMillion: 2 },
    });
    expect(parsePrices(undefined)).toEqual({});
    expect(() => parsePrices('{"m":{"inputPerMillion":-1,"outputPerMillion":2}}')).toThrow(/m.inputPerMillion/);
    expect(() => parsePrices('nope')).toThrow(/JSON object/);
  });
});
