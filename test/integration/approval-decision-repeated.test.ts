/**
 * A decision sent again on an approval already decided: a different decision is refused with 409 `E_ALREADY_DECIDED`.
 */
import { describe, expect, it } from 'vitest';
import { waitingGate } from '../support/gates.ts';
import { useTestStack, waitForRun } from '../support/local-stack.ts';

const stack = useTestStack();

describe('POST /approvals/{id} sent again', () => {
  it('still refuses a different decision on a decided approval with 409', async () => {
    const { runId, approval } = await waitingGate(stack, 'a decision then another', { dependent: false });
    const path = `/approvals/${encodeURIComponent(approval.approvalId)}`;

    expect((await stack.request('POST', path, { decision: 'approve' })).status).toBe(200);
    const other = await stack.request('POST', path, { decision: 'reject', comment: 'no' });

    expect(other).toMatchObject({ status: 409, json: { error: { code: 'E_ALREADY_DECIDED' } } });
    await waitForRun(stack, runId);
  }, 90_000);
});
