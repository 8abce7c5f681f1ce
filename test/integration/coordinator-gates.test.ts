import { describe, expect, it } from 'vitest';
import { deriveRunStatus } from '../../shared/engine/run-view.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import type { ApprovalRecord } from '../../shared/ports/store.ts';
import {
  createPlannedRun,
  drainSteps,
  type Harness,
  planOf,
  step,
  useCoordinatorHarness,
} from '../support/coordinator-harness.ts';
import { at } from '../support/store-fixtures.ts';

const harness = useCoordinatorHarness();

const gate = (id: string, dependsOn: string[] = []): PlanStep =>
  step(id, dependsOn, {
    target: 'human:test.approver',
    approval: { question: `May ${id} go ahead?`, timeoutSeconds: 120 },
  });

/** Starts a run and its steps in the background; resolves once a pending approval shows up. */
async function runUntilApproval(h: Harness, steps: PlanStep[]) {
  const { runId, waiter } = await createPlannedRun(h, planOf(steps));
  await h.coordinator.startRun({ runId });
  await h.coordinator.awaitRun({ runId, taskToken: `waiter-${runId}` });
  const drained = drainSteps(h);
  let approval: ApprovalRecord | undefined;
  for (let i = 0; i < 200 && approval === undefined; i++) {
    approval = (await h.store.listApprovals({ runId, status: 'pending' }))[0];
    if (approval === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (approval === undefined) throw new Error('no approval was requested');
  // The approval record is written before the step shows awaiting_approval: wait for that too.
  for (let i = 0; i < 100; i++) {
    if ((await h.store.getStep(runId, approval.stepId))?.status === 'awaiting_approval') break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { runId, approval, drained, waiter };
}

/** What the API does with a decision (issue 4): record it, then answer the token. */
async function decide(h: Harness, approval: ApprovalRecord, decision: 'approve' | 'reject' | 'edit', output?: unknown) {
  const status = decision === 'approve' ? 'approved' : decision === 'reject' ? 'rejected' : 'edited';
  await h.store.decideApproval(approval.approvalId, { status, decidedAt: at(1), decidedBy: 'ana' });
  await h.executions.sendTaskSuccess(approval.taskToken, { decision, by: 'ana', ...(output ? { output } : {}) });
}

describe('coordinator: human gates', () => {
  it('pauses the run on a gate and completes it once approved', async () => {
    const h = harness();
    const { runId, approval, drained } = await runUntilApproval(h, [
      step('prepare'),
      gate('go', ['prepare']),
      step('ship', ['go']),
    ]);
    expect(approval).toMatchObject({
      stepId: 'go',
      kind: 'approval',
      question: 'May go go ahead?',
      input: { from: 'go' },
    });
    expect(approval.upstreamOutputs).toEqual({ prepare: { ok: true } });
    const statuses = (await h.store.listSteps(runId)).map((s) => s.status);
    const run = await h.store.getRun(runId);
    expect(deriveRunStatus(run?.status ?? 'running', statuses)).toBe('paused');

    await decide(h, approval, 'approve');
    await drained;
    expect(await h.store.getStep(runId, 'go')).toMatchObject({ status: 'succeeded', output: { approved: true } });
    expect((await h.store.getStep(runId, 'ship'))?.status).toBe('succeeded');
    expect((await h.store.getRun(runId))?.status).toBe('complete');
    expect(h.events.of('ApprovalRequested', 'go')).toHaveLength(1);
    expect(h.events.of('ApprovalDecided', 'go')[0]?.detail).toMatchObject({ decision: 'approve', by: 'ana' });
    expect(h.executions.answered.has(`waiter-${runId}`)).toBe(true);
  });

  it('fails a rejected gate for good, blocks what follows and names the denial', async () => {
    const h = harness();
    const { runId, approval, drained } = await runUntilApproval(h, [gate('go'), step('ship', ['go'])]);
    await decide(h, approval, 'reject');
    await drained;
    expect(await h.store.getStep(runId, 'go')).toMatchObject({ status: 'failed', error: { code: 'E_REJECTED' } });
    expect((await h.store.getStep(runId, 'ship'))?.status).toBe('blocked');
    expect((await h.store.getRun(runId))?.terminal).toMatchObject({ state: 'failed', reason: 'approval_denied' });
    expect(h.failures.get('go')).toEqual([{ decision: 'failed' }]);
  });

  it('fails the step when its approval expires', async () => {
    const h = harness();
    const { runId, approval, drained } = await runUntilApproval(h, [gate('go')]);
    await h.executions.sendTaskFailure(approval.taskToken, 'States.Timeout', 'the approval timed out');
    await drained;
    expect(await h.store.getStep(runId, 'go')).toMatchObject({
      status: 'failed',
      error: { code: 'E_APPROVAL_EXPIRED' },
    });
    expect((await h.store.getApproval(approval.approvalId))?.status).toBe('expired');
    expect((await h.store.getRun(runId))?.status).toBe('failed');
  });

  it('holds a low-confidence result for review and succeeds with the corrected output', async () => {
    const h = harness();
    h.scripts.set('write', () => ({ output: { draft: 'v1' }, confidence: 0.3 }));
    const writer = step('write', [], { target: 'agent:test.writer', confidenceThreshold: 0.8 });
    const { runId, approval, drained } = await runUntilApproval(h, [writer]);
    expect(approval).toMatchObject({ kind: 'review', heldOutput: { draft: 'v1' }, heldConfidence: 0.3 });
    expect((await h.store.getStep(runId, 'write'))?.output).toBeUndefined();
    await decide(h, approval, 'edit', { draft: 'v2' });
    await drained;
    expect(await h.store.getStep(runId, 'write')).toMatchObject({ status: 'succeeded', output: { draft: 'v2' } });
    expect((await h.store.getRun(runId))?.status).toBe('complete');
  });

  it('fails an edit whose output breaks the outputSchema', async () => {
    const h = harness();
    h.scripts.set('write', () => ({ output: { draft: 'v1' }, confidence: 0.1 }));
    const writer = step('write', [], { target: 'agent:test.writer', confidenceThreshold: 0.8 });
    const { runId, approval, drained } = await runUntilApproval(h, [writer]);
    await decide(h, approval, 'edit', { draft: 42 });
    await drained;
    expect(await h.store.getStep(runId, 'write')).toMatchObject({
      status: 'failed',
      error: { code: 'E_OUTPUT_CONTRACT' },
    });
  });
});

describe('coordinator: cancellation and deadlines', () => {
  it('cancels a run idempotently: steps cancelled, the claimed execution stopped, the waiter answered', async () => {
    const h = harness();
    const { runId } = await createPlannedRun(h, planOf([step('a'), step('b', ['a'])]));
    await h.coordinator.startRun({ runId });
    await h.coordinator.awaitRun({ runId, taskToken: `waiter-${runId}` });
    await h.coordinator.claimStep({ runId, stepId: 'a', generation: 1, executionId: 'exec-a' });

    const first = await h.coordinator.cancelRun(runId);
    const second = await h.coordinator.cancelRun(runId);
    expect(first).toMatchObject({ status: 'cancelled', terminal: { state: 'cancelled' } });
    expect(second.status).toBe('cancelled');
    expect((await h.store.listSteps(runId)).map((s) => [s.stepId, s.status])).toEqual([
      ['a', 'cancelled'],
      ['b', 'cancelled'],
    ]);
    expect(h.executions.stopped.map((s) => s.executionId)).toEqual(['exec-a']);
    expect(h.executions.answered.has(`waiter-${runId}`)).toBe(true);
    expect(h.events.of('RunFinished')).toHaveLength(1);
    expect(await h.coordinator.completeStep({ runId, stepId: 'a', generation: 1, attempt: 1 })).toEqual({
      status: 'cancelled',
    });
    expect(await h.coordinator.finalizeRun({ runId, timedOut: null, error: null })).toMatchObject({
      status: 'cancelled',
    });
  });

  it('fails a run at its deadline, cancelling open steps and stopping their executions', async () => {
    const h = harness();
    const { runId } = await createPlannedRun(h, planOf([step('slow')]));
    await h.coordinator.startRun({ runId });
    await h.coordinator.claimStep({ runId, stepId: 'slow', generation: 1, executionId: 'exec-slow' });
    const outcome = await h.coordinator.finalizeRun({ runId, timedOut: { Error: 'States.Timeout', Cause: '' } });
    expect(outcome).toMatchObject({ status: 'failed', terminal: { reason: 'deadline' } });
    expect(await h.store.getStep(runId, 'slow')).toMatchObject({ status: 'cancelled', error: { code: 'E_DEADLINE' } });
    expect(h.executions.stopped).toEqual([{ executionId: 'exec-slow', error: 'E_DEADLINE' }]);
  });

  it('leaves a run paused at its deadline when only a person is left to answer', async () => {
    const h = harness();
    const { runId, approval, drained } = await runUntilApproval(h, [gate('go'), step('after', ['go'])]);
    const outcome = await h.coordinator.finalizeRun({ runId, timedOut: { Error: 'States.Timeout' } });
    expect(outcome).toMatchObject({ status: 'paused', terminal: { state: 'paused', reason: 'deadline' } });
    expect((await h.store.getApproval(approval.approvalId))?.status).toBe('pending');
    // A person may still decide: the run then finishes.
    await decide(h, approval, 'approve');
    await drained;
    expect((await h.store.getRun(runId))?.status).toBe('complete');
  });

  it('answers the waiter at once when the run finished before the wait began', async () => {
    const h = harness();
    const { runId, waiter } = await createPlannedRun(h, planOf([step('a')]));
    await h.coordinator.startRun({ runId });
    await drainSteps(h);
    expect(await h.coordinator.awaitRun({ runId, taskToken: `waiter-${runId}` })).toEqual({ answered: true });
    expect(await waiter).toEqual({ finished: true });
  });

  it('fails a run whose planning failed, with the error as evidence', async () => {
    const h = harness();
    const { runId } = await createPlannedRun(h, planOf([step('a')]));
    const outcome = await h.coordinator.failRun({
      runId,
      error: { Error: 'PlannerError', Cause: JSON.stringify({ errorMessage: 'no method applies' }) },
    });
    expect(outcome).toMatchObject({ status: 'failed', terminal: { reason: 'planning_failed' } });
    expect(outcome.terminal?.evidence).toEqual({ error: { code: 'PlannerError', message: 'no method applies' } });
    await h.coordinator.startRun({ runId });
    expect(h.executions.startCalls).toHaveLength(0);
  });

  it('answers a repeated recordFailure with the same decision and records one retry', async () => {
    const h = harness();
    const { runId } = await createPlannedRun(h, planOf([step('a')]));
    await h.coordinator.startRun({ runId });
    const ref = { runId, stepId: 'a', generation: 1 };
    await h.coordinator.claimStep({ ...ref, executionId: 'exec-a' });
    const failure = { ...ref, attempt: 1, error: { code: 'E_FLAKY', message: 'flaky', retryable: true } };
    const decisions = [await h.coordinator.recordFailure(failure), await h.coordinator.recordFailure(failure)];
    expect(decisions).toEqual([
      { decision: 'retry', attempt: 2, delaySeconds: 1 },
      { decision: 'retry', attempt: 2, delaySeconds: 1 },
    ]);
    expect(h.events.of('StepRetrying')).toHaveLength(1);
    expect(await h.store.getStep(runId, 'a')).toMatchObject({ status: 'retrying', attempts: 1 });
  });
});
