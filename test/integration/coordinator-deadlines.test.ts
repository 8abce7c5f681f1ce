/**
 * Run deadlines through the real run machine: AwaitRunFinished times out (a 2-second deadline on this file's stack)
 * and FinalizeRun decides — the run fails and what still runs is stopped, or, when only a person is left to answer,
 * the run is left paused and still finishes once the person decides. A reopened run gets a deadline of its own.
 */
import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../shared/ports/store.ts';
import { eventually, useEngineStack } from '../support/engine-stack.ts';
import { held, TARGETS } from '../support/scripted-pack.ts';

const DEADLINE_SECONDS = 2;
const engine = useEngineStack({ limits: { runDeadlineSeconds: DEADLINE_SECONDS } });

/** Waits for the run execution of a run (or of its reopening) to end. */
const runMachineDone = (runId: string, name: string) =>
  eventually(
    async () =>
      engine()
        .runExecutions(runId)
        .find((e) => e.name === name),
    (execution) => execution !== undefined && execution.status !== 'RUNNING',
    `run execution ${name} ending`,
    (DEADLINE_SECONDS + 10) * 1000,
  );

describe('run deadlines', () => {
  it('fails a run at its deadline, cancelling open steps and stopping their executions', async () => {
    const { submit, step, quiet, outcome, stepExecutions, published } = engine();
    const slow = held();
    const runId = await submit([step('slow', [], { script: slow.script }), step('after', ['slow'])]);
    await runMachineDone(runId, `run-${runId}`);
    await quiet();

    const { run, steps, execution } = await outcome(runId);
    expect(run).toMatchObject({ status: 'failed', terminal: { state: 'failed', reason: 'deadline' } });
    expect(steps.get('slow')).toMatchObject({ status: 'cancelled', error: { code: 'E_DEADLINE' } });
    expect(steps.get('after')?.status).toBe('cancelled');
    expect(stepExecutions(runId, 'slow').map((e) => [e.status, e.error?.error])).toEqual([['ABORTED', 'E_DEADLINE']]);
    expect(execution?.status).toBe('SUCCEEDED');
    expect(published('RunFinished', runId).map((e) => e.detail.reason)).toEqual(['deadline']);

    // The call still in flight answers after the deadline: nothing changes.
    slow.release();
    await quiet();
    expect((await outcome(runId)).steps.get('slow')?.status).toBe('cancelled');
    expect(published('StepSucceeded', runId)).toHaveLength(0);
  });

  it('leaves a run paused at its deadline when only a person is left to answer, and finishes it on the decision', async () => {
    const { submit, step, quiet, outcome, stack } = engine();
    const runId = await submit([
      step('go', [], { target: TARGETS.approver, approval: { question: 'Go?', timeoutSeconds: 300 } }),
      step('after', ['go']),
    ]);
    await runMachineDone(runId, `run-${runId}`);
    // The machine's FinalizeRun is accepted for delivery, not decided, when the machine ends: wait for the decision.
    const paused = await eventually(
      () => outcome(runId),
      (o) => o.run.status !== 'running',
      'the run decided at its deadline',
    );
    expect(paused.run).toMatchObject({ status: 'paused', terminal: { state: 'paused', reason: 'deadline' } });
    const [approval] = (await stack.store.listApprovals({ runId })) as [ApprovalRecord];
    expect(approval.status).toBe('pending');

    const answer = await stack.request('POST', `/approvals/${encodeURIComponent(approval.approvalId)}`, {
      decision: 'approve',
    });
    await quiet();

    expect(answer.status).toBe(200);
    const { run, steps } = await outcome(runId);
    expect(steps.get('after')?.status).toBe('succeeded');
    expect(run.status).toBe('complete');
  });

  it('gives a reopened run a deadline of its own and records the new terminal after the old one', async () => {
    const { submit, step, quiet, outcome, stack, runExecutions } = engine();
    const c = held();
    const runId = await submit([
      step('a'),
      step('b', ['a']),
      step('c', ['b'], { script: (call) => (call.generation === 1 ? { output: call.input } : c.script(call)) }),
    ]);
    await quiet();
    expect((await outcome(runId)).run.status).toBe('complete');

    const answer = await stack.request('POST', `/runs/${runId}/steps/c/invalidate`, { reason: 'stale' });
    expect(answer).toMatchObject({ status: 202, json: { stepIds: ['c'], reopened: true } });
    // Generation 2 of c never answers in time: the reopened run's own wait times out.
    await runMachineDone(runId, `run-${runId}-o1`);
    await quiet();

    const { run, steps } = await outcome(runId);
    expect(run).toMatchObject({ status: 'failed', reopened: 1, terminal: { state: 'failed', reason: 'deadline' } });
    expect(run.previousTerminals?.map((t) => t.state)).toEqual(['complete']);
    expect(steps.get('c')).toMatchObject({ generation: 2, status: 'cancelled' });
    expect(runExecutions(runId).map((e) => [e.name, e.status])).toEqual([
      [`run-${runId}`, 'SUCCEEDED'],
      [`run-${runId}-o1`, 'SUCCEEDED'],
    ]);
    c.release();
    await quiet();
  });
});
