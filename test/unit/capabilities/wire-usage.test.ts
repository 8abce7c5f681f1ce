import { describe, expect, it } from 'vitest';
import { answerToResult } from '../../../shared/capabilities/wire.ts';

describe('answerToResult: a reported usage', () => {
  it('takes usage from the envelope', () => {
    const result = answerToResult({ output: { ok: true }, usage: { tokens: 7, costUsd: 0.01 } }, 'tool:x', {});
    expect(result).toMatchObject({ output: { ok: true }, usage: { inputTokens: 7, outputTokens: 0, costUsd: 0.01 } });
  });

  it('refuses a malformed usage as a malformed answer', () => {
    expect(() => answerToResult({ output: 1, usage: { tokens: -3 } }, 'tool:x', {})).toThrow(/usage/);
  });
});
