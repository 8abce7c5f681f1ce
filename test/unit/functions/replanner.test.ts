import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../functions/replanner.ts';
import { isValidationError } from '../../../shared/errors.ts';
import type { StepFailedRef } from '../../../shared/services/replanner.ts';

function handlerWithSpy() {
  const calls: StepFailedRef[] = [];
  const budgetCalls: { runId: string }[] = [];
  const raisedCalls: { runId: string }[] = [];
  const handler = createHandler({
    replanner: {
      onStepFailed: async (ref) => {
        calls.push(ref);
        return { outcome: 'revised', revision: 2 };
      },
      onBudgetExhausted: async (ref) => {
        budgetCalls.push(ref);
        return { outcome: 'revised', revision: 3 };
      },
      onLimitRaised: async (ref) => {
        raisedCalls.push(ref);
        return { outcome: 'revised', revision: 4 };
      },
      replanRun: async ({ runId }) => ({ runId, revision: 2 }),
    },
  });
  return { handler, calls, budgetCalls, raisedCalls };
}

const envelope = (detail: Record<string, unknown>, type = 'StepFailed') => ({
  version: '0',
  id: 'e-1',
  'detail-type': type,
  source: 'cairn',
  account: '123456789012',
  time: '2030-01-01T00:00:00Z',
  region: 'us-east-1',
  resources: [],
  detail,
});
const failed = {
  runId: 'run-1',
  stepId: 'B',
  generation: 2,
  attempts: 1,
  error: { code: 'E_X', message: 'boom', retryable: false },
  final: true,
  at: '2030-01-01T00:00:00Z',
};

describe('the replanner handler', () => {
  it('hands a final StepFailed event to the replanner and returns its answer', async () => {
    const { handler, calls } = handlerWithSpy();

    const answer = await handler(envelope(failed));

    expect(answer).toEqual({ outcome: 'revised', revision: 2 });
    expect(calls).toEqual([{ runId: 'run-1', stepId: 'B', generation: 2 }]);
  });

  it('ignores ApprovalDecided: a held revision expires by its own timer in the run', async () => {
    const { handler, calls } = handlerWithSpy();
    const decided = { runId: 'run-1', stepId: '~revision~2', generation: 2, approvalId: 'run-1.revision.r2.1' };

    expect(await handler(envelope({ ...decided, decision: 'expired' }, 'ApprovalDecided'))).toMatchObject({
      outcome: 'ignored',
    });
    expect(calls).toEqual([]);
  });

  it('ignores a failure that is not final', async () => {
    const { handler, calls } = handlerWithSpy();

    expect(await handler(envelope({ ...failed, final: false }))).toEqual({ outcome: 'ignored', why: 'not_final' });
    expect(calls).toEqual([]);
  });

  it('refuses what is not a StepFailed event with a ValidationError', async () => {
    const { handler, calls } = handlerWithSpy();

    for (const event of [
      {},
      envelope(failed, 'StepSucceeded'),
      envelope({ ...failed, generation: 0 }),
      envelope({ runId: 'run-1' }),
    ]) {
      const error = await handler(event).catch((e: unknown) => e);
      expect(isValidationError(error), JSON.stringify(event)).toBe(true);
    }
    expect(calls).toEqual([]);
  });

  it('hands a BudgetExhausted event under onExhausted replan to the budget answer, and ignores the other policies', async () => {
    const { handler, calls, budgetCalls } = handlerWithSpy();
    const exhausted = {
      runId: 'run-1',
      revision: 1,
      onExhausted: 'replan',
      exhausted: [{ dimension: 'costUsd', limit: 1, spent: 1.2 }],
    };

    expect(await handler(envelope(exhausted, 'BudgetExhausted'))).toEqual({ outcome: 'revised', revision: 3 });
    expect(await handler(envelope({ ...exhausted, onExhausted: 'fail' }, 'BudgetExhausted'))).toEqual({
      outcome: 'ignored',
      why: 'not_replan',
    });
    const invalid = await handler(envelope({ runId: 'run-1' }, 'BudgetExhausted')).catch((e: unknown) => e);
    expect(isValidationError(invalid)).toBe(true);
    expect(budgetCalls).toEqual([{ runId: 'run-1' }]);
    expect(calls).toEqual([]);
  });

  it('hands a BudgetRaised event that raised the replan limit to the replanner, and ignores one that did not', async () => {
    const { handler, calls, raisedCalls } = handlerWithSpy();
    const raised = { runId: 'run-1', limits: { maxReplans: 4 }, previous: { maxReplans: 2 }, requestedBy: 'ana' };

    expect(await handler(envelope(raised, 'BudgetRaised'))).toEqual({ outcome: 'revised', revision: 4 });
    expect(
      await handler(envelope({ ...raised, limits: { maxTokens: 10 }, previous: { maxTokens: 5 } }, 'BudgetRaised')),
    ).toEqual({ outcome: 'ignored', why: 'not_replan' });
    const invalid = await handler(envelope({ runId: 'run-1' }, 'BudgetRaised')).catch((e: unknown) => e);
    expect(isValidationError(invalid)).toBe(true);
    expect(raisedCalls).toEqual([{ runId: 'run-1' }]);
    expect(calls).toEqual([]);
  });
});
