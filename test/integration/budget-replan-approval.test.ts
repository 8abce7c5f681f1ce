/**
 * A budget replan whose revision adds a mutating target (issue 12 §1 and §5 together) through the embedded runtime
 * and the synthesized machines: the cheaper revision waits for a person like any revision that widens authority;
 * rejected, or nobody deciding before the deadline (CAIRN_APPROVAL_TIMEOUT_SECONDS, short here), the run ends `failed`,
 * `budget_exhausted`, its evidence saying what became of the budget replan.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Plan } from '../../shared/plan/schema.ts';
import { type ApprovalView, auditLog, decide, pendingApproval, revisions } from '../support/api-reads.ts';
import { plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { ledgerInsteadOf, useModelPlanner } from '../support/model-planner.ts';

/** The deadline of an approval without a timeout of its own, a revision's: short, so that it passes while a test waits. */
const APPROVAL_SECONDS = 3;

/** The model's cheaper revision replaces `second` by a ledger write: a mutating target the plan did not have. */
const { stack } = useModelPlanner({
  revise: ledgerInsteadOf('second', 'first'),
  stack: { limits: { maxReplans: 3, approvalTimeoutSeconds: APPROVAL_SECONDS } },
});

/** A plan that crosses its budget at `first`, under `onExhausted: "replan"`. */
const overBudget = (objective: string) => ({
  ...plan(objective, [
    step(stack, 'first', T.spend, { input: { tokens: 0, costUsd: 1.2 } }),
    step(stack, 'second', T.spend, { input: { tokens: 0, costUsd: 0.1 }, dependsOn: ['first'] }),
  ]),
  budget: { maxCostUsd: 1, onExhausted: 'replan' } satisfies Plan['budget'],
});

async function approvalOf(id: string): Promise<ApprovalView> {
  return ((await stack.request('GET', `/approvals/${id}`)).json as { approval: ApprovalView }).approval;
}

describe('a budget replan whose revision adds a mutating target', { timeout: 60_000 }, () => {
  it('waits for a person, and a rejection ends the run budget_exhausted saying the replan was rejected', async () => {
    const runId = await stack.startRun({ plan: overBudget('over budget, revision rejected') });
    const approval = await pendingApproval(stack, runId);
    expect(approval).toMatchObject({ kind: 'revision', question: expect.stringContaining(T.ledger) });

    const decided = await decide(stack, approval, { decision: 'reject', comment: 'no ledger writes' });

    expect(decided.status).toBe(200);
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('failed');
    expect(done.terminal?.reason).toBe('budget_exhausted');
    expect(done.revision).toBe(1);
    expect(done.terminal?.evidence.budgetReplan).toMatchObject({
      outcome: 'rejected',
      code: 'E_REVISION_REJECTED',
    });
    expect(done.terminal?.evidence.budget).toMatchObject({
      exhausted: [{ dimension: 'costUsd', limit: 1, spent: 1.2 }],
    });
    expect(stepOf(done, 'second').attempts).toBe(0);
    expect((done as typeof done & { budgetReplan?: unknown }).budgetReplan).toMatchObject({
      trigger: 'budget',
      outcome: 'rejected',
      code: 'E_REVISION_REJECTED',
    });
    expect(await revisions(stack, runId)).toEqual([1]);
    await stack.settled();
    const log = await auditLog(stack, runId);
    expect(log.filter((e) => e.type === 'RunFinished')).toHaveLength(1);
  });

  it('ends the run budget_exhausted saying the replan expired when nobody decides by the deadline', async () => {
    const runId = await stack.startRun({ plan: overBudget('over budget, nobody decides') });
    const approval = await pendingApproval(stack, runId);
    expect(Date.parse(approval.deadline) - Date.now()).toBeLessThanOrEqual(APPROVAL_SECONDS * 1000);

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect(done.terminal?.reason).toBe('budget_exhausted');
    expect(done.terminal?.evidence.budgetReplan).toMatchObject({
      outcome: 'expired',
      code: 'E_APPROVAL_EXPIRED',
    });
    expect(await approvalOf(approval.approvalId)).toMatchObject({
      status: 'expired',
      comment: 'no decision before the deadline',
    });
    expect(await revisions(stack, runId)).toEqual([1]);
    const late = await decide(stack, approval, { decision: 'approve' });
    expect(late.status).toBe(410);
  });
});
