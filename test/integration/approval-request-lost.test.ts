/**
 * A request for a person's decision whose work landed but whose answer was lost (the Coordinator's `requestApproval`
 * crashed after it sent the request to the run's decider), through the embedded stack's real
 * state machines: AwaitDecision is retried with a new task token, and the retry must find the request it already
 * made. Before, the retry expired the first approval ("replaced by a new request") and created a second one, so a
 * person was asked twice, and a rejection given on the first one (whose token had gone with the failed Task) was
 * lost: the step waited for it again on the second.
 */
import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../shared/ports/store.ts';
import { gatedPlan, untilAwaitingApproval } from '../support/gates.ts';
import { statusOf, summary, waitForRun } from '../support/local-stack.ts';
import { type Payload, useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults, handlers } = useStackWithFaults();

const requestOf = (objective: string) => (p: Payload) =>
  p.action === 'requestApproval' && p.runId === faults.runIdFor(objective);

/** Every approval the run's step G ever had (pending or not). */
const approvalsOf = async (runId: string): Promise<ApprovalRecord[]> =>
  faults.raw().listRunApprovals(runId, { stepId: 'G' });

const decide = (approval: ApprovalRecord, decision: 'approve' | 'reject') =>
  stack.request('POST', `/approvals/${encodeURIComponent(approval.approvalId)}`, { decision, comment: 'seen once' });

/** Waits until the step's wait was requested `times` times (the first request and its retries). */
async function requested(objective: string, times: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (handlers.invocations('Coordinator').filter(requestOf(objective)).length >= times) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`requestApproval of "${objective}" was not invoked ${times} times`);
}

/** The step's first approval, once the run's decider has made it. */
async function firstApproval(runId: string): Promise<ApprovalRecord> {
  for (let i = 0; i < 400; i++) {
    const [first] = await approvalsOf(runId);
    if (first) return first;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`run ${runId}: G has no approval`);
}

/**
 * Once the wait settled, G has exactly one approval, pending (the person was asked once), and approving it
 * completes the run.
 */
async function expectAskedOnceThenApproved(runId: string): Promise<void> {
  await untilAwaitingApproval(stack, runId);
  await stack.settled();
  const approvals = await approvalsOf(runId);
  expect(approvals.map((a) => a.status)).toEqual(['pending']);
  const [approval] = approvals;
  if (!approval) throw new Error('no approval');
  expect((await decide(approval, 'approve')).status).toBe(200);
  const done = await waitForRun(stack, runId, undefined, 30_000);
  expect(done.status, summary(done)).toBe('complete');
}

describe('a request for a decision whose answer was lost', () => {
  it('asks the person once when the Coordinator crashed after creating the approval', async () => {
    const objective = 'approval request crashed after its work';
    const lost = handlers.loseAnswer({ key: 'Coordinator', match: requestOf(objective) });
    const runId = await stack.startRun({ plan: gatedPlan(stack, objective) });
    await lost;
    await requested(objective, 2);
    await expectAskedOnceThenApproved(runId);
  }, 90_000);

  it('counts a rejection given while the wait was being retried, without asking again', async () => {
    const objective = 'approval rejected while its wait was retried';
    const lost = handlers.loseAnswer({ key: 'Coordinator', match: requestOf(objective) });
    // The retry is held until the person has answered the first request (whose token went with the failed Task).
    const retry = handlers.hold({ key: 'Coordinator', match: requestOf(objective) });
    const runId = await stack.startRun({ plan: gatedPlan(stack, objective) });
    await lost;
    await retry.arrived;
    // The first request was sent to the run's decider before its answer was lost: its approval is there once the
    // decider took it (a sender does not wait for the decision).
    const first = await firstApproval(runId);
    await decide(first, 'reject');
    retry.release();

    const done = await waitForRun(stack, runId, undefined, 30_000);
    expect(statusOf(done, 'G'), summary(done)).toBe('failed');
    expect(done.status, summary(done)).toBe('failed');
    expect((await approvalsOf(runId)).map((a) => a.status)).toEqual(['rejected']);
  }, 90_000);
});
