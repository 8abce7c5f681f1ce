import { describe, expect, it } from 'vitest';
import type { AttemptOutcome } from '../../../shared/engine/step-lifecycle.ts';
import {
  approvalWindow,
  attemptTimeLimit,
  boundRetry,
  deadlineByBudget,
  remainingMs,
  timeExhausted,
} from '../../../shared/engine/step-seconds.ts';

const at = (seconds: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, 0) + seconds * 1000).toISOString();
const error = { code: 'E_CONFORMANCE_FLAKY', message: 'flaky', retryable: true };

describe('attemptTimeLimit', () => {
  it('gives no limit when neither the step nor the run has maxSeconds', () => {
    const limit = attemptTimeLimit(
      { step: { maxTokens: 10 }, stepStartedAt: at(0), run: { maxCostUsd: 1 }, runCreatedAt: at(0) },
      at(5),
    );
    expect(limit).toBeUndefined();
  });

  it("counts the step's seconds from its claim, over all of its attempts", () => {
    const limit = attemptTimeLimit({ step: { maxSeconds: 10 }, stepStartedAt: at(100), runCreatedAt: at(0) }, at(104));
    expect(limit).toEqual({ scope: 'step', limitSeconds: 10, since: at(100) });
    expect(limit && remainingMs(limit, at(104))).toBe(6000);
  });

  it("picks the run's limit when it ends before the step's", () => {
    const budgets = { step: { maxSeconds: 30 }, stepStartedAt: at(50), run: { maxSeconds: 60 }, runCreatedAt: at(0) };
    expect(attemptTimeLimit(budgets, at(50))?.scope).toBe('run');
    expect(attemptTimeLimit({ ...budgets, stepStartedAt: at(20) }, at(20))?.scope).toBe('step');
  });

  it('names the step on a tie and leaves the step out before its claim', () => {
    const run = { maxSeconds: 10 };
    expect(attemptTimeLimit({ step: run, stepStartedAt: at(0), run, runCreatedAt: at(0) }, at(1))?.scope).toBe('step');
    expect(attemptTimeLimit({ step: { maxSeconds: 1 }, run, runCreatedAt: at(0) }, at(1))?.scope).toBe('run');
  });

  it('has nothing left once the limit is spent (never a negative remainder)', () => {
    const limit = { scope: 'step' as const, limitSeconds: 1, since: at(0) };
    expect(remainingMs(limit, at(3))).toBe(0);
  });
});

describe('timeExhausted', () => {
  it('fails for good with E_BUDGET_EXHAUSTED and the limit and the elapsed seconds as figures', () => {
    const e = timeExhausted({ scope: 'step', limitSeconds: 1, since: at(0) }, at(1.25), 'abandoned');
    expect(e).toEqual({
      code: 'E_BUDGET_EXHAUSTED',
      message: 'step budget exhausted: seconds 1.25 of 1; abandoned',
      retryable: false,
      details: { scope: 'step', exhausted: [{ dimension: 'seconds', limit: 1, spent: 1.25 }] },
    });
  });
});

describe('boundRetry', () => {
  const retry: AttemptOutcome = { kind: 'retry', attempt: 2, delaySeconds: 4, error };
  const limit = { scope: 'step' as const, limitSeconds: 10, since: at(0) };

  it('keeps a retry whose backoff ends with time left', () => {
    expect(boundRetry(retry, limit, at(5))).toBe(retry);
    expect(boundRetry(retry, undefined, at(500))).toBe(retry);
  });

  it('fails the step now when the backoff would end at or past the limit', () => {
    const decided = boundRetry(retry, limit, at(6));
    expect(decided).toMatchObject({ kind: 'fail', why: 'permanent' });
    if (decided.kind !== 'fail') throw new Error('expected a failure');
    expect(decided.error.code).toBe('E_BUDGET_EXHAUSTED');
    expect(decided.error.details).toEqual({
      scope: 'step',
      exhausted: [{ dimension: 'seconds', limit: 10, spent: 6 }],
      backoffSeconds: 4,
    });
  });

  it('leaves other outcomes alone', () => {
    const fail: AttemptOutcome = { kind: 'fail', error, why: 'exhausted' };
    expect(boundRetry({ kind: 'succeed' }, limit, at(60))).toEqual({ kind: 'succeed' });
    expect(boundRetry(fail, limit, at(60))).toBe(fail);
  });
});

describe('approvalWindow', () => {
  it("waits the approval's own timeout when the run has no seconds budget, or more left than that", () => {
    expect(approvalWindow(60, { createdAt: at(0) }, at(10))).toEqual({ seconds: 60, byBudget: false });
    expect(approvalWindow(60, { budget: { maxCostUsd: 1 }, createdAt: at(0) }, at(10))).toEqual({
      seconds: 60,
      byBudget: false,
    });
    expect(approvalWindow(60, { budget: { maxSeconds: 100 }, createdAt: at(0) }, at(10))).toEqual({
      seconds: 60,
      byBudget: false,
    });
  });

  it("ends at the run's seconds when they run out first: whole seconds, at least one", () => {
    const run = { budget: { maxSeconds: 30 }, createdAt: at(0) };
    expect(approvalWindow(86_400, run, at(10.5))).toEqual({ seconds: 20, byBudget: true });
    expect(approvalWindow(86_400, run, at(45))).toEqual({ seconds: 1, byBudget: true });
  });
});

describe('deadlineByBudget', () => {
  it('tells a deadline the budget brought forward from one of the approval’s own timeout', () => {
    expect(deadlineByBudget({ createdAt: at(0), deadline: at(20) }, 60)).toBe(true);
    expect(deadlineByBudget({ createdAt: at(0), deadline: at(60) }, 60)).toBe(false);
  });
});
