/**
 * The invalidator's rules through the real run and step machines (requests through the API, resource events
 * through the bus): reopening a finished run with a new run execution that goes straight to its wait, the outlived
 * execution's last word ignored, upstream failures outside the invalidation, concurrent and repeated requests, and
 * superseded work in flight (a running generation stopped, a waiting gate expired).
 */
import { describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../shared/ports/store.ts';
import { eventually, useEngineStack } from '../support/engine-stack.ts';
import { fail, held, TARGETS } from '../support/scripted-pack.ts';

const engine = useEngineStack();

const invalidate = (runId: string, stepId: string, body?: unknown) =>
  engine().stack.request('POST', `/runs/${runId}/steps/${stepId}/invalidate`, body);

const chain = () => {
  const { step } = engine();
  return [step('a'), step('b', ['a']), step('c', ['b'])];
};

const calls = (key: string, action: string | undefined, runId: string) =>
  engine()
    .handlers.invocations(key)
    .filter((p) => p.runId === runId && (action === undefined || p.action === action));

describe('reopening a finished run', () => {
  it('starts a new run execution that waits without planning again; the outlived execution’s last word is ignored', async () => {
    const { submit, step, quiet, outcome, handlers, stack, stepExecutions, runExecutions, published } = engine();
    // The first run execution's FinalizeRun comes late: after the run was reopened.
    const lateFinalize = handlers.hold({
      key: 'Coordinator',
      match: (p) => p.action === 'finalizeRun' && typeof p.execution === 'string' && !p.execution.includes('-o'),
    });
    const c2 = held();
    const runId = await submit([
      step('a'),
      step('b', ['a']),
      step('c', ['b'], { script: (call) => (call.generation === 1 ? { output: call.input } : c2.script(call)) }),
    ]);
    await lateFinalize.arrived;
    const first = await outcome(runId);
    expect(first.run.status).toBe('complete');

    const answer = await invalidate(runId, 'b', { reason: 'stale' });
    expect(answer).toEqual({ status: 202, json: { runId, stepIds: ['b', 'c'], reopened: true } });
    await eventually(
      async () => engine().pack.calls(runId, 'c').length,
      (n) => n === 2,
      'generation 2 of c running',
    );
    lateFinalize.release();
    await eventually(
      async () => runExecutions(runId).find((e) => e.name === `run-${runId}`)?.status,
      (status) => status === 'SUCCEEDED',
      'the first run execution ending',
    );
    // The new opening goes on: the old execution's FinalizeRun did not decide it.
    expect((await outcome(runId)).run).toMatchObject({ status: 'running', reopened: 1 });

    c2.release();
    await quiet();
    const { run, steps } = await outcome(runId);
    expect(run).toMatchObject({ status: 'complete', reopened: 1, terminal: { state: 'complete' } });
    expect(run.previousTerminals).toHaveLength(1);
    expect(run.revision).toBe(1);
    expect(runExecutions(runId).map((e) => [e.name, e.status])).toEqual([
      [`run-${runId}`, 'SUCCEEDED'],
      [`run-${runId}-o1`, 'SUCCEEDED'],
    ]);
    // The reopened execution went straight to its wait: planned, validated and started once in all.
    expect(calls('Planner', undefined, runId)).toHaveLength(1);
    expect(calls('Validator', undefined, runId)).toHaveLength(1);
    expect(calls('Coordinator', 'startRun', runId)).toHaveLength(1);
    expect(published('RunStarted', runId)).toHaveLength(1);
    expect(published('RunFinished', runId)).toHaveLength(2);
    expect([steps.get('b')?.generation, steps.get('c')?.generation]).toEqual([2, 2]);
    expect(stepExecutions(runId, 'a')).toHaveLength(1);
    expect(stepExecutions(runId, 'b')).toHaveLength(2);
    await stack.bus.drain();
  });

  it('blocks a new generation that waits for an upstream failure outside the invalidation; the run fails again', async () => {
    const { step, runPlan, quiet, outcome, runExecutions } = engine();
    const first = await runPlan([
      step('bad', [], { script: fail('E_BOOM', false) }),
      step('w'),
      step('d', ['w', 'bad']),
    ]);
    expect(first.run.status).toBe('failed');
    const { runId } = first;

    const answer = await invalidate(runId, 'w');
    await quiet();

    expect(answer).toEqual({ status: 202, json: { runId, stepIds: ['w', 'd'], reopened: true } });
    const { run, steps } = await outcome(runId);
    expect(steps.get('d')).toMatchObject({ generation: 2, status: 'blocked' });
    expect(steps.get('w')).toMatchObject({ generation: 2, status: 'succeeded' });
    expect(run).toMatchObject({ status: 'failed', reopened: 1 });
    expect(runExecutions(runId).map((e) => e.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
  });
});

describe('repeated and concurrent requests', () => {
  it('takes two invalidations that race one after the other: what waits downstream runs once, after the latest', async () => {
    const { runPlan, quiet, outcome, stepExecutions, pack, step } = engine();
    // b's new generations are held in their call until both answers are in: neither can end before the other is taken.
    const b = held();
    const { runId } = await runPlan([
      step('a'),
      step('b', ['a'], { script: (call) => (call.generation === 1 ? { output: call.input } : b.script(call)) }),
      step('c', ['b']),
    ]);

    const answers = await Promise.all([invalidate(runId, 'b'), invalidate(runId, 'b')]);
    b.release();
    await quiet();

    // Two requests (no Idempotency-Key) are two invalidations: the run's decider takes them in turn, each moving b
    // and c (the race of their store writes, where one lost its moves, is gone with the writes). The run reopens
    // once, and c, waiting for b, runs only in its latest generation.
    const results = answers.map((a) => a.json as { stepIds: string[]; reopened: boolean });
    expect(answers.map((a) => a.status)).toEqual([202, 202]);
    expect(results.map((r) => r.stepIds)).toEqual([
      ['b', 'c'],
      ['b', 'c'],
    ]);
    expect(results.filter((r) => r.reopened)).toHaveLength(1);
    const { run, steps } = await outcome(runId);
    expect(steps.get('b')).toMatchObject({ generation: 3, status: 'succeeded' });
    expect(steps.get('c')).toMatchObject({ generation: 3, status: 'succeeded' });
    expect(stepExecutions(runId, 'c')).toHaveLength(2);
    expect(pack.calls(runId, 'c').map((c) => c.generation)).toEqual([1, 3]);
    expect(pack.calls(runId, 'b').filter((c) => c.generation === 3)).toHaveLength(1);
    expect(run).toMatchObject({ status: 'complete', reopened: 1 });
  });

  it('answers a repeated request id with the first result and invalidates once', async () => {
    const { runPlan, quiet, outcome, stack } = engine();
    const { runId } = await runPlan(chain());
    const post = () =>
      fetch(`${stack.url}/runs/${runId}/steps/a/invalidate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.token}`, 'idempotency-key': `req-${runId}` },
      }).then(async (r) => ({ status: r.status, json: await r.json() }));

    const first = await post();
    const again = await post();
    await quiet();

    expect(first.status).toBe(202);
    expect(again).toEqual(first);
    const { steps, run } = await outcome(runId);
    expect(steps.get('a')?.generation).toBe(2);
    expect(run.reopened).toBe(1);
  });

  it('handles a resource event once per event', async () => {
    const { step, runPlan, quiet, outcome, stack, published } = engine();
    const key = `bucket/${Date.now()}`;
    const { runId } = await runPlan([step('a', [], { watches: [key] }), step('b', ['a'])]);
    const changed = () =>
      stack.bus.publish([
        { detailType: 'ResourceChanged', detail: { resourceKey: key, source: 'crm', deliveryId: 'e-1' } },
      ]);

    await changed();
    await quiet();
    await changed();
    await quiet();

    const { steps, run } = await outcome(runId);
    expect([steps.get('a')?.generation, steps.get('b')?.generation]).toEqual([2, 2]);
    expect(published('StepsInvalidated', runId)).toHaveLength(1);
    expect(run).toMatchObject({ status: 'complete', reopened: 1 });
    // The change says who asked: the webhook's source.
    expect(run.actions).toEqual([expect.objectContaining({ type: 'invalidate', requestedBy: 'webhook:crm' })]);
  });

  it('refuses an unknown step or run (404) and a run that has not started (409)', async () => {
    const { runPlan, submit, handlers, quiet } = engine();
    const { runId } = await runPlan(chain());
    expect((await invalidate(runId, 'zzz')).status).toBe(404);
    expect((await invalidate('ghost', 'a')).status).toBe(404);

    const planning = handlers.hold({ key: 'Planner', match: () => true });
    const waiting = await submit(chain());
    await planning.arrived;
    expect((await invalidate(waiting, 'a')).status).toBe(409);
    planning.release();
    await quiet();
  });
});

describe('superseded work in flight', () => {
  it('stops the execution of a waiting gate, expires its approval, and asks again for the new generation', async () => {
    const { step, submit, quiet, outcome, stack, stepExecutions } = engine();
    const runId = await submit([
      step('g', [], { target: TARGETS.approver, approval: { question: 'ok?', timeoutSeconds: 60 } }),
      step('after', ['g']),
    ]);
    const pendingOf = (generation: number) =>
      eventually(
        async () =>
          (await stack.store.listApprovals({ runId, status: 'pending' })).find((a) => a.generation === generation),
        (a) => a !== undefined,
        `a pending approval of generation ${generation}`,
      ) as Promise<ApprovalRecord>;
    const old = await pendingOf(1);
    await eventually(
      () => stack.store.getStep(runId, 'g'),
      (s) => s?.status === 'awaiting_approval',
      'g awaiting approval',
    );

    const answer = await invalidate(runId, 'g', { reason: 'policy changed' });

    expect(answer).toEqual({ status: 202, json: { runId, stepIds: ['g', 'after'], reopened: false } });
    expect(stepExecutions(runId, 'g')[0]).toMatchObject({ status: 'ABORTED', error: { error: 'E_SUPERSEDED' } });
    expect((await stack.store.getApproval(old.approvalId))?.status).toBe('expired');
    // The old request can no longer be decided.
    const late = await stack.request('POST', `/approvals/${encodeURIComponent(old.approvalId)}`, {
      decision: 'approve',
    });
    expect(late.status).toBeGreaterThanOrEqual(409);

    const next = await pendingOf(2);
    await stack.request('POST', `/approvals/${encodeURIComponent(next.approvalId)}`, { decision: 'approve' });
    await quiet();

    const { run, steps } = await outcome(runId);
    expect(steps.get('g')).toMatchObject({ generation: 2, status: 'succeeded' });
    expect(steps.get('after')).toMatchObject({ generation: 2, status: 'succeeded' });
    expect(run.status).toBe('complete');
  });
});
