/**
 * A plan's `budget.maxSeconds` while a revision approval is all the run waits for (issue 12 §1 with §5), through
 * the synthesized machines: the approval's deadline is the run's seconds left (its own is a day), kept by the same
 * timer (the `~revision~` wait), and expiring there closes it saying the budget ran out; the failure it would have
 * answered stands and the run ends `failed`, `budget_exhausted`.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { type ApprovalView, pendingApproval, revisions } from '../support/api-reads.ts';
import { plan, step, summary, waitForRun } from '../support/local-stack.ts';
import { ledgerInsteadOf, useModelPlanner } from '../support/model-planner.ts';

const MAX_SECONDS = 3;

/** The model replaces the failed F by a ledger write: a mutating target, so the revision waits for a person. */
const { stack } = useModelPlanner({ revise: ledgerInsteadOf('F', 'A') });

describe("a plan's maxSeconds while a revision approval is all the run waits for", { timeout: 60_000 }, () => {
  it('expires the approval at the budget and ends the run budget_exhausted', async () => {
    const runId = await stack.startRun({
      plan: {
        ...plan('echo, then fail, on a short budget', [
          step(stack, 'A', T.echo, { input: { value: 'A' } }),
          step(stack, 'F', T.fail, { input: { message: 'down', retryable: false }, dependsOn: ['A'] }),
        ]),
        budget: { maxSeconds: MAX_SECONDS },
      },
    });
    const approval = await pendingApproval(stack, runId);
    expect(approval.kind).toBe('revision');
    expect(Date.parse(approval.deadline) - Date.now()).toBeLessThanOrEqual(MAX_SECONDS * 1000);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect(done.terminal?.reason).toBe('budget_exhausted');
    expect(done.revision).toBe(1);
    const closed = (await stack.request('GET', `/approvals/${approval.approvalId}`)).json as { approval: ApprovalView };
    expect(closed.approval).toMatchObject({ status: 'expired', comment: expect.stringContaining('budget') });
    expect(await revisions(stack, runId)).toEqual([1]);
  });
});
