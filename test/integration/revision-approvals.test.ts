/**
 * Revision approvals of automatic replans (issue 12 §5) through the embedded runtime and the synthesized machines:
 * a step failure's replan whose revision adds a mutating target waits for a person; approving it makes the revision
 * and the run completes, rejecting it ends the run failed with the rejection as evidence, and cancelling the run
 * closes the approval so that a late decision changes nothing. The planner is a model behind an OpenAI-compatible
 * endpoint (a fake in process) so that each test says which revision it proposes.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { REVISION_APPROVAL_STEP } from '../../shared/events/bus-rules.ts';
import { nameSafe } from '../../shared/ports/executions.ts';
import { type ApprovalView, revisions } from '../support/api-reads.ts';
import { formatName } from '../support/fake-openai-server.ts';
import { getRun, plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { ledgerInsteadOf, useModelPlanner } from '../support/model-planner.ts';

/** The failed step F is replaced by a ledger write: a mutating target the plan did not have. */
const model = useModelPlanner({ revise: ledgerInsteadOf('F', 'A') });
const { stack } = model;

/** A run whose step F failed and whose automatic revision waits for a person: the run and the approval. */
async function runAwaitingRevision(objective: string): Promise<{ runId: string; approval: ApprovalView }> {
  const runId = await stack.startRun({
    plan: plan(objective, [
      step(stack, 'A', T.echo, { input: { value: 'A' } }),
      step(stack, 'F', T.fail, { input: { message: 'down', retryable: false }, dependsOn: ['A'] }),
    ]),
  });
  for (let i = 0; i < 600; i++) {
    const { json } = await stack.request('GET', `/approvals?status=pending&runId=${runId}`);
    const approval = (json as { approvals: ApprovalView[] }).approvals.find((a) => a.kind === 'revision');
    if (approval) return { runId, approval };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`run ${runId}: no revision approval came: ${summary(await getRun(stack, runId))}`);
}

/** The run's revision approval waits (step machine executions of `~revision~<r>`) that are still running. */
async function runningRevisionWaits(runId: string) {
  await stack.settled();
  const prefix = `${nameSafe(runId)}-${nameSafe(REVISION_APPROVAL_STEP)}`;
  return stack.executions.list().filter((e) => e.name.startsWith(prefix) && e.status === 'RUNNING');
}

const approvalOf = async (id: string): Promise<ApprovalView> =>
  ((await stack.request('GET', `/approvals/${id}`)).json as { approval: ApprovalView }).approval;

describe('an automatic replan whose revision adds a mutating target', () => {
  it('waits for a person, and on approval makes the revision and the run completes', async () => {
    const { runId, approval } = await runAwaitingRevision('echo, then fail');

    expect(approval.question).toContain(T.ledger);
    const waiting = await getRun(stack, runId);
    expect(waiting).toMatchObject({ status: 'running', revision: 1 });
    expect(stepOf(waiting, 'F')).toMatchObject({ status: 'failed', error: { code: 'E_CONFORMANCE_FAIL' } });

    const decided = await stack.request('POST', `/approvals/${approval.approvalId}`, { decision: 'approve' });

    expect(decided).toMatchObject({ status: 200, json: { approval: { status: 'approved' } } });
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.revision).toBe(2);
    expect(stepOf(done, 'F')).toMatchObject({
      status: 'succeeded',
      generation: 2,
      output: { entryId: expect.any(String) },
    });
    expect(stepOf(done, 'A')).toMatchObject({ status: 'succeeded', generation: 1 });
    expect(await revisions(stack, runId)).toEqual([1, 2]);
    // The approval's deadline timer (a day away) ended with the decision: no execution lingers until then.
    expect(await runningRevisionWaits(runId)).toEqual([]);
  }, 60_000);

  it('ends the run failed on a rejection, the failure standing and the rejection its evidence', async () => {
    const { runId, approval } = await runAwaitingRevision('echo, then fail, no writes');

    const decided = await stack.request('POST', `/approvals/${approval.approvalId}`, {
      decision: 'reject',
      comment: 'no ledger writes',
    });

    expect(decided).toMatchObject({ status: 200, json: { approval: { status: 'rejected' } } });
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('failed');
    expect(done.revision).toBe(1);
    expect(stepOf(done, 'F')).toMatchObject({ status: 'failed', generation: 1 });
    expect(JSON.stringify(done.terminal?.evidence)).toContain('E_REVISION_REJECTED');
    expect(await revisions(stack, runId)).toEqual([1]);
    expect(await runningRevisionWaits(runId)).toEqual([]);
  }, 60_000);
});

describe('cancelling a run whose revision waits for a person', () => {
  for (const body of [{}, { compensate: true }]) {
    it(`closes the approval (cancel ${JSON.stringify(body)}) and refuses a later decision with 409`, async () => {
      const { runId, approval } = await runAwaitingRevision(`cancel ${JSON.stringify(body)}`);

      const cancel = await stack.request('POST', `/runs/${runId}/cancel`, body);
      expect(cancel.status).toBeLessThan(300);
      const cancelled = await waitForRun(stack, runId);
      expect(cancelled.status).toBe('cancelled');

      const { json } = await stack.request('GET', `/approvals?status=pending&runId=${runId}`);
      expect((json as { approvals: ApprovalView[] }).approvals).toEqual([]);
      expect(await approvalOf(approval.approvalId)).toMatchObject({
        status: 'expired',
        comment: expect.stringContaining('cancelled'),
      });
      const late = await stack.request('POST', `/approvals/${approval.approvalId}`, { decision: 'approve' });
      expect(late).toMatchObject({ status: 409, json: { error: { code: 'E_RUN_CANCELLED' } } });
      await stack.settled();
      expect(await getRun(stack, runId)).toMatchObject({ status: 'cancelled', revision: 1 });
      expect(await revisions(stack, runId)).toEqual([1]);
      expect(await approvalOf(approval.approvalId)).toMatchObject({ status: 'expired' });
      expect(await runningRevisionWaits(runId)).toEqual([]);
    }, 60_000);
  }
});

describe('a replan request racing a step failure whose revision adds a mutating target', () => {
  it('holds one revision for one approval, and its approval makes one revision', async () => {
    let release = () => {};
    model.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runId = await stack.startRun({
      plan: plan('echo, then fail, raced', [
        step(stack, 'A', T.echo, { input: { value: 'A' } }),
        step(stack, 'F', T.fail, { input: { message: 'down', retryable: false }, dependsOn: ['A'] }),
      ]),
    });
    // The failure's replan is with the model (held) when the person's request arrives.
    await waitForRun(stack, runId, (r) => r.steps.some((s) => s.id === 'F' && s.status === 'failed'), 10_000);
    const asked = stack.request('POST', `/runs/${runId}/replan`, { reason: 'F needs the ledger' });
    for (let i = 0; i < 200 && model.fake.requests.filter((r) => formatName(r) === 'submit_plan').length < 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    // Both asked the model before either answered: the race is real.
    expect(model.fake.requests.filter((r) => formatName(r) === 'submit_plan').length).toBe(2);
    release();
    expect([202, 409]).toContain((await asked).status);
    await stack.settled();

    const { json } = await stack.request('GET', `/approvals?runId=${runId}`);
    const approvals = (json as { approvals: ApprovalView[] }).approvals.filter((a) => a.kind === 'revision');
    expect(approvals.map((a) => a.status)).toEqual(['pending']);
    const decided = await stack.request('POST', `/approvals/${approvals[0]?.approvalId}`, { decision: 'approve' });
    expect(decided.status).toBe(200);

    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    expect(await revisions(stack, runId)).toEqual([1, 2]);
    expect(stepOf(done, 'F')).toMatchObject({ status: 'succeeded', generation: 2 });
    expect((await stack.store.getRun(runId))?.replans).toBe(1);
    const events = (await stack.request('GET', `/runs/${runId}/events`)).json as { events: { type: string }[] };
    expect(events.events.filter((e) => e.type === 'PlanRevised')).toHaveLength(1);
  }, 60_000);
});
