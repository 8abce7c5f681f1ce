/**
 * A person's replan (`POST /runs/{id}/replan {reason, objective?}`, issue 12 §5) through the embedded runtime and
 * the synthesized machines, with the planner on a model behind an OpenAI-compatible endpoint (a fake in process)
 * so that each test says which revision the model proposes and can read what the model was told: a complete run
 * reopens on the new revision, a revision that adds a mutating target waits for a person's approval, a cancelled
 * run is refused, and a request racing a step failure gives one current revision.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { revisions } from '../support/api-reads.ts';
import { type FakeChatRequest, formatName } from '../support/fake-openai-server.ts';
import { getRun, plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useModelPlanner, userText } from '../support/model-planner.ts';

const model = useModelPlanner();
const { stack } = model;

const echo = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });
const ledger = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.ledger, { input: { entry: { from: id } }, rollbackHint: 'remove the entry by hand', ...fields });
const settled = (run: { status: string }) => ['complete', 'failed', 'cancelled', 'paused'].includes(run.status);

/** A person's replan through the API: the answer, then its planning job once the worker is done. */
async function replanJob(runId: string, body: Record<string, unknown>) {
  const answer = await stack.request('POST', `/runs/${runId}/replan`, body);
  if (answer.status !== 202) return { status: answer.status, json: answer.json, job: undefined };
  await stack.settled();
  const { jobId } = answer.json as { jobId: string };
  const polled = await stack.request('GET', `/plans/${jobId}`);
  const job = polled.json as { status: string; revision?: number; approvalId?: string; error?: { code: string } };
  return { status: answer.status, json: answer.json, job };
}

async function eventTypes(runId: string): Promise<string[]> {
  const { json } = await stack.request('GET', `/runs/${runId}/events`);
  return (json as { events: { type: string }[] }).events.map((e) => e.type);
}

describe('a person replans a complete run', () => {
  it('reopens it on the revision the model made from the reason and the new objective, keeping finished work', async () => {
    const runId = await stack.startRun({ plan: plan('echo one thing', [echo('A')]) });
    const first = await waitForRun(stack, runId);
    expect(first.status, summary(first)).toBe('complete');
    model.revise = (steps) => [...steps, echo('B', { dependsOn: ['A'] })];

    const { status, job } = await replanJob(runId, { reason: 'we also need B', objective: 'echo two things' });

    expect(status).toBe(202);
    expect(job).toMatchObject({ status: 'succeeded', revision: 2 });
    const prompt = userText(model.fake.requests.at(-1) as FakeChatRequest);
    expect(prompt).toContain('Objective:\necho two things');
    expect(prompt).toContain('Their reason: we also need B');
    const done = await waitForRun(stack, runId, (r) => r.status === 'complete' && r.revision === 2);
    expect(stepOf(done, 'A')).toMatchObject({ status: 'succeeded', generation: 1, output: first.steps[0]?.output });
    expect(stepOf(done, 'B')).toMatchObject({ status: 'succeeded', generation: 1 });
    expect((await stack.store.getRun(runId))?.objective).toBe('echo two things');
    const types = await eventTypes(runId);
    expect(types.filter((t) => t === 'RunFinished')).toHaveLength(2);
    expect(types.indexOf('RunReopened')).toBeGreaterThan(types.indexOf('RunFinished'));
    expect(await revisions(stack, runId)).toEqual([1, 2]);
  });

  it('runs a changed finished step again, and what depends on it, while an unchanged one keeps its output', async () => {
    const runId = await stack.startRun({ plan: plan('echo', [echo('A'), echo('B'), echo('C', { dependsOn: ['B'] })]) });
    await waitForRun(stack, runId);
    model.revise = (steps) => steps.map((s) => (s.id === 'B' ? { ...s, input: { value: 'B, again' } } : s));

    expect((await replanJob(runId, { reason: 'B said the wrong thing' })).job).toMatchObject({ revision: 2 });

    const done = await waitForRun(stack, runId, (r) => r.status === 'complete' && r.revision === 2);
    expect(done.steps.map((s) => [s.id, s.generation])).toEqual([
      ['A', 1],
      ['B', 2],
      ['C', 2],
    ]);
  });
});

describe('a revision that adds a mutating target', () => {
  it('waits for a person: the run stays as it was until the approval, then reopens and runs it', async () => {
    const runId = await stack.startRun({ plan: plan('echo, then record', [echo('A')]) });
    await waitForRun(stack, runId);
    model.revise = (steps) => [...steps, ledger('L', { dependsOn: ['A'] })];

    const { job } = await replanJob(runId, { reason: 'record it in the ledger' });

    expect(job).toMatchObject({ status: 'succeeded', approvalId: expect.any(String) });
    expect(job).not.toHaveProperty('revision');
    expect(await getRun(stack, runId)).toMatchObject({ status: 'complete', revision: 1 });
    const pending = await stack.request('GET', '/approvals?status=pending');
    const approval = (
      pending.json as { approvals: { approvalId: string; kind: string; question: string }[] }
    ).approvals.find((a) => a.approvalId === job?.approvalId);
    expect(approval).toMatchObject({ kind: 'revision', question: expect.stringContaining(T.ledger) });
    expect(await replanJob(runId, { reason: 'another one' })).toMatchObject({
      status: 409,
      json: { error: { code: 'E_REVISION_PENDING' } },
    });

    const decided = await stack.request('POST', `/approvals/${job?.approvalId}`, { decision: 'approve' });

    expect(decided).toMatchObject({ status: 200, json: { approval: { status: 'approved' } } });
    const done = await waitForRun(stack, runId, (r) => r.status === 'complete' && r.revision === 2);
    expect(stepOf(done, 'L')).toMatchObject({ status: 'succeeded', output: { entryId: expect.any(String) } });
  });

  it('is dropped on a rejection: the previous revision stays and the approval says so', async () => {
    const runId = await stack.startRun({ plan: plan('echo, maybe record', [echo('A')]) });
    await waitForRun(stack, runId);
    model.revise = (steps) => [...steps, ledger('L', { dependsOn: ['A'] })];
    const { job } = await replanJob(runId, { reason: 'record it in the ledger' });
    const eventsBefore = await eventTypes(runId);

    const decided = await stack.request('POST', `/approvals/${job?.approvalId}`, {
      decision: 'reject',
      comment: 'no writes today',
    });

    expect(decided).toMatchObject({
      status: 200,
      json: { approval: { status: 'rejected', comment: 'no writes today' } },
    });
    await stack.settled();
    expect(await getRun(stack, runId)).toMatchObject({ status: 'complete', revision: 1 });
    expect(await revisions(stack, runId)).toEqual([1]);
    // Nothing is announced after the run's RunFinished while it stays finished.
    expect(await eventTypes(runId)).toEqual(eventsBefore);
    const again = await stack.request('POST', `/approvals/${job?.approvalId}`, { decision: 'approve' });
    expect(again.status).toBe(409);
  });
});

describe('requests the run refuses', () => {
  it('answers 409 E_RUN_CANCELLED for a cancelled run and 400 for a body out of bounds', async () => {
    const runId = await stack.startRun({
      plan: plan('wait', [step(stack, 'S', T.sleep, { input: { ms: 5000 } })]),
    });
    await waitForRun(stack, runId, (r) => r.status === 'running');
    expect((await stack.request('POST', `/runs/${runId}/replan`, { reason: 'x', extra: 1 })).status).toBe(400);
    expect((await stack.request('POST', `/runs/${runId}/replan`, { reason: 'x'.repeat(2001) })).status).toBe(400);
    expect((await stack.request('POST', `/runs/${runId}/replan`, { reason: 'x', objective: ' ' })).status).toBe(400);
    await stack.request('POST', `/runs/${runId}/cancel`, {});
    await waitForRun(stack, runId);

    const refused = await stack.request('POST', `/runs/${runId}/replan`, { reason: 'try again' });

    expect(refused).toMatchObject({ status: 409, json: { error: { code: 'E_RUN_CANCELLED' } } });
  });
});

describe('a replan request racing a step failure', () => {
  it('gives one current revision: the request and the automatic replan never both apply', async () => {
    let release = () => {};
    model.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    model.revise = (steps) => steps.map((s) => (s.id === 'F' ? echo('F') : s));
    const runId = await stack.startRun({
      plan: plan('fail, then replan', [
        echo('A'),
        step(stack, 'F', T.fail, { input: { message: 'down', retryable: false }, dependsOn: ['A'] }),
      ]),
    });
    // The failure's replan is with the model (held) when the person's request arrives.
    await waitForRun(stack, runId, (r) => r.steps.some((s) => s.id === 'F' && s.status === 'failed'), 10_000);
    const asked = stack.request('POST', `/runs/${runId}/replan`, { reason: 'F is fixed' });
    for (let i = 0; i < 200 && model.fake.requests.filter((r) => formatName(r) === 'submit_plan').length < 2; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    expect([202, 409]).toContain((await asked).status);

    const done = await waitForRun(stack, runId, (r) => settled(r) && r.revision >= 2);
    await stack.settled();

    expect(done.status, summary(done)).toBe('complete');
    expect(await revisions(stack, runId)).toEqual([1, 2]);
    expect(stepOf(done, 'F')).toMatchObject({ status: 'succeeded', generation: 2 });
    expect(stepOf(done, 'A')).toMatchObject({ generation: 1 });
    expect((await eventTypes(runId)).filter((t) => t === 'PlanRevised')).toHaveLength(1);
    expect((await stack.store.getRun(runId))?.replans).toBe(1);
  }, 60_000);
});
