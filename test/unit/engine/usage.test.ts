import { describe, expect, it } from 'vitest';
import { usageOf } from '../../../shared/engine/usage.ts';

describe('usage', () => {
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
