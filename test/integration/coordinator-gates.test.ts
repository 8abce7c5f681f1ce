/**
 * People in the loop and the run's own ends, through the real step and run machines: a gate parks the step machine
 * on a task token (AwaitDecision) until the approval API decides or the callback times out; a low-confidence result
 * waits for a review; cancellation stops what runs; a planning failure ends the run; the run machine's wait is
 * answered even when the run finished before the wait began.
 */
import { describe, expect, it } from 'vitest';
import { deriveRunStatus } from '../../shared/engine/run-view.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import type { ApprovalRecord } from '../../shared/ports/store.ts';
import { type EngineStack, eventually, useEngineStack } from '../support/engine-stack.ts';
import { held, succeed, TARGETS } from '../support/scripted-pack.ts';

const engine = useEngineStack();

const gate = (id: string, dependsOn: string[] = [], timeoutSeconds = 120): PlanStep =>
  engine().step(id, dependsOn, {
    target: TARGETS.approver,
    approval: { question: `May ${id} go ahead?`, timeoutSeconds },
  });

/** Submits the plan and waits until a person is asked (the approval pending, the step awaiting it). */
async function untilAsked(steps: PlanStep[]): Promise<{ runId: string; approval: ApprovalRecord }> {
  const { submit, stack } = engine();
  const runId = await submit(steps);
  const approval = await eventually(
    async () => (await stack.store.listApprovals({ runId, status: 'pending' }))[0],
    (found) => found !== undefined,
    'an approval request',
  );
  if (!approval) throw new Error('unreachable');
  await eventually(
    () => stack.store.getStep(runId, approval.stepId),
    (s) => s?.status === 'awaiting_approval',
    `${approval.stepId} awaiting approval`,
  );
  return { runId, approval };
}

/** A decision through the approval API, as a person in the console gives it. */
const decide = (e: EngineStack, approval: ApprovalRecord, body: Record<string, unknown>) =>
  e.stack.request('POST', `/approvals/${encodeURIComponent(approval.approvalId)}`, body);

describe('human gates', () => {
  it('pauses the run on a gate and completes it once approved', async () => {
    const e = engine();
    const { runId, approval } = await untilAsked([e.step('prepare'), gate('go', ['prepare']), e.step('ship', ['go'])]);
    expect(approval).toMatchObject({
      stepId: 'go',
      kind: 'approval',
      question: 'May go go ahead?',
      input: { from: 'go' },
    });
    expect(approval.upstreamOutputs).toEqual({ prepare: { from: 'prepare' } });
    const waiting = await e.outcome(runId);
    expect(
      deriveRunStatus(
        waiting.run.status,
        [...waiting.steps.values()].map((s) => s.status),
      ),
    ).toBe('paused');
    expect(waiting.steps.get('ship')?.status).toBe('pending');
    expect(e.pack.calls(runId, 'ship')).toHaveLength(0);

    const answer = await decide(e, approval, { decision: 'approve' });
    await e.quiet();

    expect(answer.status).toBe(200);
    const { run, steps, execution } = await e.outcome(runId);
    expect(steps.get('go')).toMatchObject({ status: 'succeeded', output: { approved: true } });
    expect(steps.get('ship')?.status).toBe('succeeded');
    expect(run.status).toBe('complete');
    expect(execution?.status).toBe('SUCCEEDED');
    expect(e.published('ApprovalRequested', runId, 'go')).toHaveLength(1);
    const decidedBy = (answer.json as { approval: { decidedBy?: string } }).approval.decidedBy;
    expect(decidedBy).toEqual(expect.any(String));
    expect(e.published('ApprovalDecided', runId, 'go').map((ev) => ev.detail)).toEqual([
      expect.objectContaining({ decision: 'approve', by: decidedBy }),
    ]);
  });

  it('fails a rejected gate for good, blocks what follows and names the denial', async () => {
    const e = engine();
    const { runId, approval } = await untilAsked([gate('go'), e.step('ship', ['go'])]);
    await decide(e, approval, { decision: 'reject', comment: 'not now' });
    await e.quiet();
    const { run, steps, execution } = await e.outcome(runId);
    expect(steps.get('go')).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'E_REJECTED' } });
    expect(steps.get('ship')?.status).toBe('blocked');
    expect(run.terminal).toMatchObject({ state: 'failed', reason: 'approval_denied' });
    // No retry of a rejection: one final failure, and the run finished on it.
    expect(e.published('StepRetrying', runId)).toHaveLength(0);
    expect(e.published('StepFailed', runId, 'go').map((ev) => ev.detail.final)).toEqual([true]);
    expect(execution?.status).toBe('SUCCEEDED');
  });

  it('fails the step when its approval times out (the callback timeout path)', async () => {
    const e = engine();
    const { runId, approval } = await untilAsked([gate('go', [], 1), e.step('after', ['go'])]);
    await eventually(
      () => e.outcome(runId),
      (o) => o.run.status === 'failed',
      'the run failing on the expired approval',
    );
    await e.quiet();
    const { steps, run } = await e.outcome(runId);
    expect(steps.get('go')).toMatchObject({ status: 'failed', error: { code: 'E_APPROVAL_EXPIRED' } });
    expect(await e.stack.store.listAttempts(runId, 'go')).toMatchObject([
      { outcome: 'failed', error: { code: 'E_APPROVAL_EXPIRED' }, evidence: { gate: true, ending: 'expired' } },
    ]);
    expect(steps.get('after')?.status).toBe('blocked');
    expect((await e.stack.store.getApproval(approval.approvalId))?.status).toBe('expired');
    expect(run.terminal).toMatchObject({ state: 'failed' });
    expect(e.published('ApprovalDecided', runId, 'go').map((ev) => ev.detail.decision)).toEqual(['expired']);
    // The expired request can no longer be decided.
    expect((await decide(e, approval, { decision: 'approve' })).status).toBe(410);
  });

  it('holds a low-confidence result for review and succeeds with the corrected output', async () => {
    const e = engine();
    const writer = e.step('write', [], {
      target: TARGETS.writer,
      confidenceThreshold: 0.8,
      script: succeed({ draft: 'v1' }, 0.3),
    });
    const { runId, approval } = await untilAsked([writer, e.step('use', ['write'])]);
    expect(approval).toMatchObject({ kind: 'review', heldOutput: { draft: 'v1' }, heldConfidence: 0.3 });
    expect((await e.stack.store.getStep(runId, 'write'))?.output).toBeUndefined();
    expect(e.pack.calls(runId, 'use')).toHaveLength(0);

    await decide(e, approval, { decision: 'edit', output: { draft: 'v2' } });
    await e.quiet();

    const { run, steps } = await e.outcome(runId);
    expect(steps.get('write')).toMatchObject({ status: 'succeeded', output: { draft: 'v2' } });
    expect(run.status).toBe('complete');
    // The writer ran once: the review judged its held result, it did not run it again.
    expect(e.pack.calls(runId, 'write')).toHaveLength(1);
  });

  it('fails an edit whose output breaks the outputSchema, even one that reaches the task token directly', async () => {
    const e = engine();
    const writer = e.step('write', [], {
      target: TARGETS.writer,
      confidenceThreshold: 0.8,
      script: succeed({ draft: 'v1' }, 0.1),
    });
    const { runId, approval } = await untilAsked([writer]);
    // The API refuses it...
    expect((await decide(e, approval, { decision: 'edit', output: { draft: 42 } })).status).toBe(422);
    // ...and RunStep verifies a decision that skipped the API (SendTaskSuccess from elsewhere) all the same.
    await e.stack.executions.sendTaskSuccess(approval.taskToken, { decision: 'edit', output: { draft: 42 } });
    await e.quiet();
    const { steps, run } = await e.outcome(runId);
    expect(steps.get('write')).toMatchObject({ status: 'failed', error: { code: 'E_OUTPUT_SCHEMA' } });
    expect(run.status).toBe('failed');
  });
});

describe('cancellation', () => {
  it('cancels a run idempotently: steps cancelled, the running execution stopped, the run machine done', async () => {
    const e = engine();
    const slow = held();
    const runId = await e.submit([e.step('a', [], { script: slow.script }), e.step('b', ['a'])]);
    await eventually(
      async () => e.pack.calls(runId, 'a'),
      (calls) => calls.length === 1,
      'a running',
    );

    const first = await e.stack.request('POST', `/runs/${runId}/cancel`);
    const second = await e.stack.request('POST', `/runs/${runId}/cancel`);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    await e.quiet();

    const { run, steps, execution } = await e.outcome(runId);
    expect(run).toMatchObject({ status: 'cancelled', terminal: { state: 'cancelled' } });
    expect([...steps.values()].map((s) => [s.stepId, s.status])).toEqual([
      ['a', 'cancelled'],
      ['b', 'cancelled'],
    ]);
    expect(e.stepExecutions(runId, 'a').map((x) => [x.status, x.error?.error])).toEqual([['ABORTED', 'E_CANCELLED']]);
    expect(execution?.status).toBe('SUCCEEDED');
    expect(e.published('RunFinished', runId)).toHaveLength(1);

    // The call in flight answers after all: its result changes nothing.
    slow.release();
    await e.quiet();
    const later = await e.outcome(runId);
    expect(later.steps.get('a')?.status).toBe('cancelled');
    expect(later.run.status).toBe('cancelled');
    expect(e.published('StepSucceeded', runId)).toHaveLength(0);
    expect(e.stepExecutions(runId, 'b')).toHaveLength(0);
  });
});

/** The types of the run's events the bus delivered after its RunFinished (none, whatever raced the end). */
function afterFinish(e: EngineStack, runId: string): string[] {
  const timeline = e.timeline(runId);
  const finished = timeline.findIndex((event) => event['detail-type'] === 'RunFinished');
  expect(finished, 'RunFinished published').toBeGreaterThanOrEqual(0);
  return timeline.slice(finished + 1).map((event) => event['detail-type']);
}

/**
 * The ledger, the attempt records and the step tell one story for a step with a side effect: at most one entry;
 * an entry exactly when an attempt succeeded with its id, and then the step holds that output (succeeded, or
 * cancelled with it as evidence); no entry, no succeeded attempt and no output.
 */
async function expectLedgerAgrees(e: EngineStack, runId: string, stepId: string): Promise<void> {
  const entries = e.pack.ledger(runId, stepId);
  const succeeded = (await e.faults.raw().listAttempts(runId, stepId)).filter((a) => a.outcome === 'succeeded');
  const step = await e.faults.raw().getStep(runId, stepId);
  expect(entries.length, `${stepId}: side effects`).toBeLessThanOrEqual(1);
  const [entry] = entries;
  if (entry === undefined) {
    expect(succeeded, `${stepId}: a succeeded attempt without a side effect`).toEqual([]);
    expect(step?.output ?? null, `${stepId}: an output without a side effect`).toBeNull();
    return;
  }
  expect(succeeded.map((a) => a.output)).toEqual([{ entryId: entry.entryId }]);
  expect(step?.output).toEqual({ entryId: entry.entryId });
  expect(['succeeded', 'cancelled']).toContain(step?.status);
}

describe('cancellation with side effects in flight', () => {
  it('records a side effect that had started on its cancelled step: ledger, attempt and step agree', async () => {
    const e = engine();
    const slow = held();
    const runId = await e.submit([
      e.step('pay', [], { target: TARGETS.ledger, script: slow.script }),
      e.step('after-pay', ['pay']),
    ]);
    await eventually(
      async () => e.pack.calls(runId, 'pay'),
      (calls) => calls.length === 1,
      'pay calling',
    );
    expect((await e.stack.request('POST', `/runs/${runId}/cancel`)).status).toBe(200);

    slow.release();
    await eventually(
      () => e.faults.raw().getStep(runId, 'pay'),
      (step) => step?.output !== undefined && step.output !== null,
      'the side effect recorded on the cancelled step',
      5000,
    );
    // The step's execution writes a first attempt's output onto the step itself before its decider hears of the
    // attempt: the step's trace is read once everything has settled.
    await e.quiet();
    const pay = await e.faults.raw().getStep(runId, 'pay');
    expect(pay).toMatchObject({ status: 'cancelled', error: { code: 'E_CANCELLED' }, attempts: 1 });
    expect(pay?.trace.at(-1)?.text).toMatch(/attempt 1: tool:test.ledger .* succeeded .* after the step was cancelled/);
    expect(e.pack.ledger(runId, 'pay')).toHaveLength(1);
    await expectLedgerAgrees(e, runId, 'pay');
    expect((await e.outcome(runId)).run.status).toBe('cancelled');
    expect(e.stepExecutions(runId, 'after-pay')).toHaveLength(0);
    expect(afterFinish(e, runId)).toEqual([]);
  });

  it('never makes a side effect that had not started when the run was cancelled', async () => {
    const e = engine();
    // The step is claimed and about to act (its idempotency record is being taken) when the cancellation lands.
    const acting = e.faults.hold({
      method: 'beginIdempotent',
      match: (call) => String(call.args[0]).includes('#unstarted#'),
    });
    const runId = await e.submit([e.step('unstarted', [], { target: TARGETS.ledger })]);
    await acting.arrived;
    expect((await e.stack.request('POST', `/runs/${runId}/cancel`)).status).toBe(200);

    acting.release();
    await eventually(
      async () => ({
        step: await e.faults.raw().getStep(runId, 'unstarted'),
        made: e.pack.calls(runId, 'unstarted').length,
      }),
      ({ step, made }) => made > 0 || (step?.trace.some((t) => t.text.includes('not started')) ?? false),
      'the attempt given up',
      5000,
    );
    await e.quiet();
    expect(e.pack.calls(runId, 'unstarted')).toEqual([]);
    expect(e.pack.ledger(runId)).toEqual([]);
    expect(await e.faults.raw().listAttempts(runId, 'unstarted')).toEqual([]);
    expect(await e.faults.raw().getStep(runId, 'unstarted')).toMatchObject({
      status: 'cancelled',
      error: { code: 'E_CANCELLED' },
    });
    await expectLedgerAgrees(e, runId, 'unstarted');
    expect(afterFinish(e, runId)).toEqual([]);
  });

  it('announces no approval request after RunFinished and leaves none to decide, when the request comes after the cancel', async () => {
    const e = engine();
    // The gate's request for a decision is on its way to the run's decider when the cancellation lands.
    const asking = e.handlers.hold({ key: 'Coordinator', match: (p) => p.action === 'requestApproval' });
    const runId = await e.submit([gate('late-gate')]);
    await asking.arrived;
    expect((await e.stack.request('POST', `/runs/${runId}/cancel`)).status).toBe(200);
    asking.release();
    await e.quiet();
    expect(await e.faults.raw().listApprovals({ runId, status: 'pending' })).toEqual([]);
    expect(afterFinish(e, runId)).toEqual([]);
    expect(e.published('ApprovalRequested', runId)).toEqual([]);
    const { run, steps } = await e.outcome(runId);
    expect(run.status).toBe('cancelled');
    expect(steps.get('late-gate')?.status).toBe('cancelled');
  });
});

describe('the run machine', () => {
  it('fails a run whose planning failed, with the error as evidence, starting no step', async () => {
    const e = engine();
    const objective = `Plan something ${Date.now()}`;
    // The planner dies storing its plan (not an error Step Functions retries): PlanRun's Catch goes to FailRun.
    e.faults.throwOn({
      method: 'updateRun',
      when: 'before',
      name: 'PlannerCrashed',
      match: (call) =>
        call.runId === e.faults.runIdFor(objective) &&
        (call.args[2] as { candidatePlan?: unknown } | undefined)?.candidatePlan !== undefined,
    });
    const runId = await e.stack.startRun({ objective });
    await e.quiet();
    const { run, steps, execution } = await e.outcome(runId);
    expect(run).toMatchObject({ status: 'failed', terminal: { reason: 'planning_failed' } });
    expect(run.terminal?.evidence.error).toMatchObject({
      code: 'PlannerCrashed',
      message: expect.stringContaining('injected'),
    });
    expect(steps.size).toBe(0);
    expect(e.stack.executions.list().filter((x) => x.machine === 'step' && x.name.startsWith(runId))).toEqual([]);
    expect(execution?.status).toBe('SUCCEEDED');
    expect(e.published('RunFinished', runId).map((ev) => ev.detail.reason)).toEqual(['planning_failed']);
  });

  it('answers the wait at once when the run finished before the wait began', async () => {
    const e = engine();
    // AwaitRunFinished's invocation is late: the run's only step finishes before the wait is registered.
    const late = e.handlers.hold({ key: 'Coordinator', match: (p) => p.action === 'awaitRun' });
    const runId = await e.submit([e.step('a')]);
    await late.arrived;
    await eventually(
      () => e.outcome(runId),
      (o) => o.run.status === 'complete',
      'the run completing',
    );
    late.release();
    await e.quiet();
    const { run, execution } = await e.outcome(runId);
    expect(run.status).toBe('complete');
    expect(execution?.status).toBe('SUCCEEDED');
    expect(e.published('RunFinished', runId)).toHaveLength(1);
  });
});
