import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffSeconds, decideRetry, retryPolicy } from '../../../shared/engine/retry.ts';

const policy = { maxRetries: 3, baseSeconds: 1, capSeconds: 60 };

describe('backoffSeconds', () => {
  it('doubles per attempt from the base', () => {
    expect([1, 2, 3, 4].map((a) => backoffSeconds(a, 1, 60))).toEqual([1, 2, 4, 8]);
    expect([1, 2, 3].map((a) => backoffSeconds(a, 3, 60))).toEqual([3, 6, 12]);
  });

  it('never exceeds the cap', () => {
    expect(backoffSeconds(10, 1, 60)).toBe(60);
    expect(backoffSeconds(1000, 1, 60)).toBe(60);
  });

  it('rounds up to whole seconds for a Wait state', () => {
    expect(backoffSeconds(1, 0.5, 60)).toBe(1);
    expect(backoffSeconds(2, 0.75, 60)).toBe(2);
  });

  it('is zero with a zero base', () => {
    expect(backoffSeconds(5, 0, 60)).toBe(0);
  });

  it('is a non-decreasing whole number bounded by the cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 600 }),
        (a, base, cap) => {
          const here = backoffSeconds(a, base, cap);
          expect(Number.isInteger(here)).toBe(true);
          expect(here).toBeLessThanOrEqual(Math.max(cap, 0));
          expect(backoffSeconds(a + 1, base, cap)).toBeGreaterThanOrEqual(here);
        },
      ),
    );
  });
});

describe('decideRetry', () => {
  it('retries a retryable error with the next attempt and its delay', () => {
    expect(decideRetry(1, { retryable: true }, policy)).toEqual({ decision: 'retry', attempt: 2, delaySeconds: 1 });
    expect(decideRetry(3, { retryable: true }, policy)).toEqual({ decision: 'retry', attempt: 4, delaySeconds: 4 });
  });

  it('fails once maxRetries + 1 attempts are spent', () => {
    expect(decideRetry(4, { retryable: true }, policy)).toEqual({ decision: 'failed', reason: 'exhausted' });
  });

  it('fails a permanent error at once without spending retries', () => {
    expect(decideRetry(1, { retryable: false }, policy)).toEqual({ decision: 'failed', reason: 'permanent' });
  });

  it('treats an error without a flag as transient', () => {
    expect(decideRetry(1, {}, policy).decision).toBe('retry');
  });

  it('never retries with maxRetries 0', () => {
    expect(decideRetry(1, { retryable: true }, { ...policy, maxRetries: 0 })).toEqual({
      decision: 'failed',
      reason: 'exhausted',
    });
  });

  it('gives exactly maxRetries + 1 attempts to an always-failing retryable step', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 }), (maxRetries) => {
        let attempt = 1;
        let decision = decideRetry(attempt, { retryable: true }, { ...policy, maxRetries });
        while (decision.decision === 'retry') {
          expect(decision.attempt).toBe(attempt + 1);
          attempt = decision.attempt;
          decision = decideRetry(attempt, { retryable: true }, { ...policy, maxRetries });
        }
        expect(attempt).toBe(maxRetries + 1);
      }),
    );
  });
});

describe('retryPolicy', () => {
  it('takes the step maxRetries or the default of 3', () => {
    expect(retryPolicy({ maxRetries: 1 }, { baseSeconds: 2, capSeconds: 30 })).toEqual({
      maxRetries: 1,
      baseSeconds: 2,
      capSeconds: 30,
    });
    expect(retryPolicy({}, { baseSeconds: 1, capSeconds: 60 }).maxRetries).toBe(3);
  });
});
