/**
 * A decision that was taken but whose answer was lost (the run's decider decided it, then the API's read of the
 * decided approval for its answer timed out: 503, "send the request again") is sent again by the same person: the
 * repeat answers the waiting step's token and gets 200. Before, the repeat got 409 `E_ALREADY_DECIDED` and nobody
 * ever answered the token, so the step stayed `awaiting_approval` and its run open until its deadline (the chaos
 * suite's stuck run, seed 5: a review approved, its step never moving on).
 */
import { describe, expect, it } from 'vitest';
import type { ApprovalRecord, Store } from '../../shared/ports/store.ts';
import { waitingGate } from '../support/gates.ts';
import { summary, useTestStack, waitForRun } from '../support/local-stack.ts';

let lost = 0;

/** The store whose first read of an approval already decided (the API's answer to the decision) loses its answer. */
function losingFirstDecision(store: Store): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key !== 'getApproval' || typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const result = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as
          | ApprovalRecord
          | undefined;
        if (lost === 0 && result !== undefined && result.status !== 'pending' && result.status !== 'expired') {
          lost += 1;
          const error = new Error('injected: the decision was taken, the answer was lost');
          error.name = 'TimeoutError';
          throw error;
        }
        return result;
      };
    },
  });
}

const stack = useTestStack({ wrapStore: losingFirstDecision });

describe('POST /approvals/{id} sent again', () => {
  it('answers the waiting step when the first decision was recorded but its answer lost', async () => {
    const { runId, approval } = await waitingGate(stack, 'a decision sent twice');
    const decide = () =>
      stack.request('POST', `/approvals/${encodeURIComponent(approval.approvalId)}`, {
        decision: 'approve',
        comment: 'ok',
      });

    expect((await decide()).status).toBe(503);
    const again = await decide();

    expect(again).toMatchObject({ status: 200, json: { approval: { status: 'approved' } } });
    const done = await waitForRun(stack, runId, undefined, 60_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(lost).toBe(1);
  }, 90_000);

  it('still refuses a different decision on a decided approval with 409', async () => {
    const { runId, approval } = await waitingGate(stack, 'a decision then another', { dependent: false });
    const path = `/approvals/${encodeURIComponent(approval.approvalId)}`;

    expect((await stack.request('POST', path, { decision: 'approve' })).status).toBe(200);
    const other = await stack.request('POST', path, { decision: 'reject', comment: 'no' });

    expect(other).toMatchObject({ status: 409, json: { error: { code: 'E_ALREADY_DECIDED' } } });
    await waitForRun(stack, runId);
  }, 90_000);
});
