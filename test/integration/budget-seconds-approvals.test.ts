/**
 * A plan's `budget.maxSeconds` when the only open work is a person's decision (issue 12 §1), through the synthesized
 * state machines on the embedded runtime: nothing runs, so nothing else would notice the limit passing; the gate's
 * wait (the step machine's task-token wait, the timer a deployment keeps too) ends at the run's seconds instead of
 * the approval's own timeout (a day here). The approval closes saying the budget ran out, the gate fails as stopped
 * by the run's budget, and the run ends `budget_exhausted`: `failed`, or `paused` under `onExhausted: "pause"`.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Plan } from '../../shared/plan/schema.ts';
import { type ApprovalView, decide, pendingApproval } from '../support/api-reads.ts';
import { plan, step, stepOf, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

const stack = useTestStack();

/** The run's seconds: short, so that they run out while the test waits; the gate's own timeout is far away. */
const MAX_SECONDS = 3;

const gated = (objective: string, budget: Plan['budget']) => ({
  ...plan(objective, [
    step(stack, 'first', T.echo, { input: { value: 1 } }),
    step(stack, 'gate', T.approver, {
      dependsOn: ['first'],
      approval: { question: 'May it go ahead?', timeoutSeconds: 86_400 },
    }),
    step(stack, 'after', T.echo, { dependsOn: ['gate'], input: { value: 2 } }),
  ]),
  budget,
});

async function approvalOf(id: string): Promise<ApprovalView> {
  return ((await stack.request('GET', `/approvals/${id}`)).json as { approval: ApprovalView }).approval;
}

describe("a plan's maxSeconds while only a person's decision is awaited", { timeout: 60_000 }, () => {
  it('ends the run failed, budget_exhausted, when the seconds run out, closing the approval', async () => {
    const runId = await stack.startRun({ plan: gated('a gate on a short budget', { maxSeconds: MAX_SECONDS }) });
    const approval = await pendingApproval(stack, runId, 'gate');
    // The approval's deadline is the budget's, not its own day.
    expect(Date.parse(approval.deadline) - Date.now()).toBeLessThanOrEqual(MAX_SECONDS * 1000);

    const run = await waitForRun(stack, runId);

    expect(run.status, summary(run)).toBe('failed');
    expect(run.terminal?.reason).toBe('budget_exhausted');
    expect(run.terminal?.evidence.budget).toMatchObject({
      limits: { maxSeconds: MAX_SECONDS },
      exhausted: [{ dimension: 'seconds', limit: MAX_SECONDS }],
    });
    expect(stepOf(run, 'gate')).toMatchObject({
      status: 'failed',
      error: { code: 'E_BUDGET_EXHAUSTED', details: { scope: 'run' } },
    });
    expect(stepOf(run, 'after').attempts).toBe(0);
    expect(await approvalOf(approval.approvalId)).toMatchObject({
      status: 'expired',
      comment: expect.stringMatching(/^closed: run budget exhausted: seconds [0-9.]+ of 3; no decision/),
    });
    const late = await decide(stack, approval, { decision: 'approve' });
    expect(late.status).toBe(410);
  });

  it('pauses the run, budget_exhausted, under onExhausted "pause"', async () => {
    const runId = await stack.startRun({
      plan: gated('a gate on a short budget, paused', { maxSeconds: MAX_SECONDS, onExhausted: 'pause' }),
    });
    const approval = await pendingApproval(stack, runId, 'gate');

    // A run waiting for a person shows `paused` already; the budget's pause is the one with a terminal record.
    const run = await waitForRun(stack, runId, (r) => r.status === 'paused' && r.terminal != null);

    expect(run.terminal?.reason, summary(run)).toBe('budget_exhausted');
    expect(stepOf(run, 'gate')).toMatchObject({ status: 'failed', error: { code: 'E_BUDGET_EXHAUSTED' } });
    expect((await approvalOf(approval.approvalId)).status).toBe('expired');
  });
});
