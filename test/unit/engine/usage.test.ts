import { describe, expect, it } from 'vitest';
import { addUsage, NO_USAGE, sumUsage, usageOf } from '../../../shared/engine/usage.ts';

describe('usage', () => {
  it('adds two usages field by field', () => {
    expect(addUsage({ inputTokens: 1, outputTokens: 2 }, { inputTokens: 10, outputTokens: 20 })).toEqual({
      inputTokens: 11,
      outputTokens: 22,
    });
  });

  it('sums the records that have a usage, counting the others as zero', () => {
    const records = [
      { usage: { inputTokens: 100, outputTokens: 5 } },
      {},
      { usage: undefined },
      { usage: { inputTokens: 20, outputTokens: 7 } },
    ];
    expect(sumUsage(records)).toEqual({ inputTokens: 120, outputTokens: 12 });
    expect(sumUsage([])).toEqual(NO_USAGE);
  });

  it.each([
    [12, 3, { inputTokens: 12, outputTokens: 3 }],
    [0, 0, { inputTokens: 0, outputTokens: 0 }],
    [undefined, 3, undefined],
    [12, null, undefined],
    [-1, 3, undefined],
    [1.5, 3, undefined],
    ['12', 3, undefined],
  ])('reads provider counts %j and %j as %j', (input, output, usage) => {
    expect(usageOf(input, output)).toEqual(usage);
  });
});
