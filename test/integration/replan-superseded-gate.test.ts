/**
 * A revision that restarts a gate waiting for a person closes what the superseded generation left open, as an
 * invalidation does: its pending approval expires (a late decision on it answers 410 E_APPROVAL_SUPERSEDED, and
 * GET /approvals no longer offers it) and its running attempt is closed as superseded. Before, the revision only
 * stopped the gate's execution: the approval stayed pending until someone decided on it, and the attempt stayed
 * `running` until the run ended.
 *
 * Through a person's replan on the embedded stack's real machines, with the planner on a fake model: the revision
 * changes A, so A runs again and G, downstream of it, starts a new generation.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { type ApprovalView, decide, pendingApproval } from '../support/api-reads.ts';
import { eventually } from '../support/engine-stack.ts';
import { untilAwaitingApproval } from '../support/gates.ts';
import { plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useModelPlanner } from '../support/model-planner.ts';

const model = useModelPlanner();
const { stack } = model;

const echo = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

type GenerationalApproval = ApprovalView & { readonly generation: number };

async function pendingApprovals(runId: string): Promise<GenerationalApproval[]> {
  const { json } = await stack.request('GET', `/approvals?status=pending&runId=${runId}`);
  return (json as { approvals: GenerationalApproval[] }).approvals;
}

describe('a revision that restarts or removes a gate waiting for a person', () => {
  it("closes the superseded generation's approval and attempt", async () => {
    const runId = await stack.startRun({
      plan: plan('a gate restarted by a revision', [
        echo('A'),
        step(stack, 'G', T.approver, {
          dependsOn: ['A'],
          approval: { question: 'May G go ahead?', timeoutSeconds: 120 },
        }),
      ]),
    });
    await untilAwaitingApproval(stack, runId);
    const first = await pendingApproval(stack, runId, 'G');

    model.revise = (steps) => steps.map((s) => (s.id === 'A' ? { ...s, input: { value: 'A, again' } } : s));
    expect((await stack.request('POST', `/runs/${runId}/replan`, { reason: 'A says it again' })).status).toBe(202);
    const waiting = await waitForRun(
      stack,
      runId,
      (r) => r.revision === 2 && stepOf(r, 'G').generation === 2 && stepOf(r, 'G').status === 'awaiting_approval',
    );

    // The run still waits for G's generation 2 (paused for a person): nothing here is the run's ending sweep.
    expect(waiting.status).toBe('paused');
    const pending = await pendingApprovals(runId);
    expect(pending.map((a) => `${a.stepId}#${a.generation}`)).toEqual(['G#2']);
    const late = await decide(stack, first, { decision: 'approve' });
    expect(late).toMatchObject({ status: 410, json: { error: { code: 'E_APPROVAL_SUPERSEDED' } } });
    const superseded = (await stack.store.listAttempts(runId, 'G')).filter((a) => a.generation === 1);
    expect(superseded).toHaveLength(1);
    expect(superseded[0]).toMatchObject({ outcome: 'failed', error: { code: 'E_SUPERSEDED' } });

    const second = pending[0];
    if (!second) throw new Error('no pending approval of G#2');
    expect((await decide(stack, second, { decision: 'approve' })).status).toBe(200);
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}${s.status}`)).toEqual(['A2succeeded', 'G2succeeded']);
  }, 60_000);

  it('closes the approval and attempt of a gate the revision removes, and the decision on it answers 410', async () => {
    const gate = (id: string) =>
      step(stack, id, T.approver, { approval: { question: `May ${id} go?`, timeoutSeconds: 120 } });
    const runId = await stack.startRun({ plan: plan('a gate removed by a revision', [gate('G'), gate('H')]) });
    await waitForRun(
      stack,
      runId,
      (r) => r.steps.length === 2 && r.steps.every((s) => s.status === 'awaiting_approval'),
    );
    const removed = await pendingApproval(stack, runId, 'G');

    model.revise = (steps) => steps.filter((s) => s.id !== 'G');
    expect((await stack.request('POST', `/runs/${runId}/replan`, { reason: 'G is not needed' })).status).toBe(202);
    await waitForRun(stack, runId, (r) => r.revision === 2);
    // The revision is stored before its records move: G is superseded, and its approval closed, a moment later.
    // H still waits (the run paused for it): G's approval closes with the revision, not at the run's end.
    const pending = await eventually(
      () => pendingApprovals(runId),
      (approvals) => approvals.length === 1,
      "G's approval closed",
    );
    expect(pending.map((a) => a.stepId)).toEqual(['H']);
    expect(await stack.store.getStep(runId, 'G')).toMatchObject({ status: 'superseded' });
    const late = await decide(stack, removed, { decision: 'approve' });
    expect(late).toMatchObject({
      status: 410,
      json: { error: { code: 'E_APPROVAL_SUPERSEDED', message: expect.stringMatching(/removed the step/) } },
    });
    const attempts = await stack.store.listAttempts(runId, 'G');
    expect(attempts.map((a) => `${a.outcome} ${a.error?.code}`)).toEqual(['failed E_SUPERSEDED']);

    const kept = pending[0];
    if (!kept) throw new Error('no pending approval of H');
    expect((await decide(stack, kept, { decision: 'approve' })).status).toBe(200);
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
  }, 60_000);
});
