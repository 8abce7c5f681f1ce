/**
 * A revision approval's deadline (issue 12 §5) through the embedded runtime and the synthesized machines: the same
 * deadline as a step's approval without a timeout of its own (the run deadline, short here) and the same timer, the
 * step machine's task-token wait. Nobody decides: the approval expires, the revision is not made, and a late
 * decision is refused with 410 like any expired approval's.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { type ApprovalView, revisions } from '../support/api-reads.ts';
import { getRun, plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { ledgerInsteadOf, useModelPlanner } from '../support/model-planner.ts';

/** The run deadline, and so a revision approval's: short, so that it passes while the test waits. */
const DEADLINE_SECONDS = 3;

/** Every revision the fake model proposes replaces F by a ledger write, or adds one: a mutating target. */
const { stack } = useModelPlanner({
  revise: ledgerInsteadOf('F', 'A'),
  stack: { limits: { runDeadlineSeconds: DEADLINE_SECONDS } },
});

async function revisionApproval(runId: string): Promise<ApprovalView | undefined> {
  const { json } = await stack.request('GET', `/approvals?runId=${runId}`);
  return (json as { approvals: ApprovalView[] }).approvals.find((a) => a.kind === 'revision');
}

/** Polls the run's revision approval until `until` holds. */
async function waitForApproval(runId: string, until: (a: ApprovalView) => boolean): Promise<ApprovalView> {
  for (let i = 0; i < 800; i++) {
    const approval = await revisionApproval(runId);
    if (approval && until(approval)) return approval;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(
    `run ${runId}: the revision approval never got there: ${JSON.stringify(await revisionApproval(runId))}`,
  );
}

describe('a revision approval nobody decides', () => {
  it('expires at its deadline: a complete run stays at its revision and a late decision gets 410', async () => {
    const runId = await stack.startRun({ plan: plan('echo', [step(stack, 'A', T.echo, { input: { value: 'A' } })]) });
    expect((await waitForRun(stack, runId)).status).toBe('complete');
    expect((await stack.request('POST', `/runs/${runId}/replan`, { reason: 'record it' })).status).toBe(202);
    const pending = await waitForApproval(runId, (a) => a.status === 'pending');
    const waited = Date.parse(pending.deadline) - Date.now();
    expect(waited).toBeLessThanOrEqual(DEADLINE_SECONDS * 1000);

    const expired = await waitForApproval(runId, (a) => a.status !== 'pending');

    expect(expired).toMatchObject({ status: 'expired', comment: 'no decision before the deadline' });
    const late = await stack.request('POST', `/approvals/${pending.approvalId}`, { decision: 'approve' });
    expect(late).toMatchObject({ status: 410, json: { error: { code: 'E_APPROVAL_EXPIRED' } } });
    await stack.settled();
    expect(await getRun(stack, runId)).toMatchObject({ status: 'complete', revision: 1 });
    expect(await revisions(stack, runId)).toEqual([1]);
  }, 60_000);

  it('expires when an automatic replan waits for it: the revision is not made and the failure stands', async () => {
    const runId = await stack.startRun({
      plan: plan('echo, then fail', [
        step(stack, 'A', T.echo, { input: { value: 'A' } }),
        step(stack, 'F', T.fail, { input: { message: 'down', retryable: false }, dependsOn: ['A'] }),
      ]),
    });
    const pending = await waitForApproval(runId, (a) => a.status === 'pending');

    const expired = await waitForApproval(runId, (a) => a.status !== 'pending');

    expect(expired).toMatchObject({ status: 'expired', comment: 'no decision before the deadline' });
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('failed');
    expect(done.revision).toBe(1);
    expect(stepOf(done, 'F')).toMatchObject({ status: 'failed', generation: 1 });
    await stack.settled();
    const run = await stack.store.getRun(runId);
    expect(run?.replanDeclines?.join(' ')).toContain('E_APPROVAL_EXPIRED');
    const late = await stack.request('POST', `/approvals/${pending.approvalId}`, { decision: 'approve' });
    expect(late.status).toBe(410);
    expect(await revisions(stack, runId)).toEqual([1]);
  }, 60_000);
});
