/**
 * No attempt stays `running` in a finished run (the chaos suite's "attempt left running" finding). A gate's attempt
 * is recorded `running` while it waits; whoever ends the gate closes it, but two orders left it open for good:
 * - the gate's record landed after its run was cancelled (the cancellation looked for it before it existed);
 * - an invalidation read the gate before it was claimed and started its next generation after the claim: it took
 *   the superseded generation for one that never ran, so it closed nothing, and the run completed on the new one.
 *   The run's decider now takes the invalidation and the gate's wait one after the other (no read goes stale in
 *   between): what stays to show is that the superseded generation's waiting attempt is closed.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { AttemptRecord } from '../../shared/ports/store.ts';
import { gatedPlan, untilAwaitingApproval } from '../support/gates.ts';
import { type LocalStack, plan, step, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

/** The step's attempts once one is recorded and none is `running`, or as they are after `ms` (a test then fails). */
async function attemptsOnceClosed(target: LocalStack, runId: string, stepId: string, ms = 15_000) {
  const until = Date.now() + ms;
  let attempts: AttemptRecord[] = await target.store.listAttempts(runId, stepId);
  while ((attempts.length === 0 || attempts.some((a) => a.outcome === 'running')) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    attempts = await target.store.listAttempts(runId, stepId);
  }
  return attempts;
}

async function decide(runId: string, stepId: string, generation: number): Promise<void> {
  const until = Date.now() + 15_000;
  const pending = async () =>
    (await stack.store.listApprovals({ runId, status: 'pending' })).find(
      (a) => a.stepId === stepId && a.generation === generation,
    );
  let approval = await pending();
  while (!approval && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    approval = await pending();
  }
  if (!approval) throw new Error(`no pending approval of ${stepId}#${generation}`);
  const answer = await stack.request('POST', `/approvals/${encodeURIComponent(approval.approvalId)}`, {
    decision: 'approve',
  });
  expect(answer.status).toBe(200);
}

describe('a gate attempt in a finished run', () => {
  it('is closed by the gate itself when it was recorded after the run was cancelled', async () => {
    const objective = 'a gate recorded after its cancellation';
    const held = faults.hold({ method: 'putAttempt', match: (call) => call.runId === faults.runIdFor(objective) });
    const runId = await stack.startRun({ plan: gatedPlan(stack, objective) });
    await held.arrived;

    const cancel = await stack.request('POST', `/runs/${runId}/cancel`);
    expect(cancel.status).toBe(200);
    const done = await waitForRun(stack, runId, undefined, 30_000);
    expect(done.status, summary(done)).toBe('cancelled');
    held.release();

    const attempts = await attemptsOnceClosed(stack, runId, 'G');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ outcome: 'failed', error: { code: 'E_CANCELLED' } });
  }, 90_000);

  it('is closed when an invalidation supersedes its generation while it waits, and the run completes', async () => {
    const objective = 'a waiting gate superseded';
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.approver, { approval: { question: 'May A go ahead?', timeoutSeconds: 120 } }),
        step(stack, 'G', T.approver, {
          dependsOn: ['A'],
          approval: { question: 'May G go ahead?', timeoutSeconds: 120 },
        }),
      ]),
    });
    await untilAwaitingApproval(stack, runId, 'A');
    await decide(runId, 'A', 1);
    // G's generation 1 waits for a person (its attempt recorded running), then an invalidation supersedes it.
    await untilAwaitingApproval(stack, runId);
    const invalidation = await stack.request('POST', `/runs/${runId}/steps/G/invalidate`, { reason: 'changed' });
    expect(invalidation.status, JSON.stringify(invalidation.json)).toBeLessThan(300);
    await waitForRun(stack, runId, (run) => run.steps.find((s) => s.id === 'G')?.generation === 2);
    await untilAwaitingApproval(stack, runId);
    await decide(runId, 'G', 2);

    const done = await waitForRun(stack, runId, undefined, 30_000);
    expect(done.status, summary(done)).toBe('complete');
    const superseded = (await attemptsOnceClosed(stack, runId, 'G')).filter((a) => a.generation === 1);
    expect(superseded).toHaveLength(1);
    expect(superseded[0]).toMatchObject({ outcome: 'failed', error: { code: 'E_SUPERSEDED' } });
  }, 90_000);
});
