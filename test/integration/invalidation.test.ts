/**
 * Stale-dependency invalidation through the embedded runtime: the synthesized ASL (ResumeOrPlan included), the real
 * handlers, the in-process bus with the deployed rule patterns, dynalite. Counted from the outside: step executions
 * per generation, attempts per step and generation, run executions, the run's terminal states.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createHandler as createInvalidatorHandler } from '../../functions/invalidator.ts';
import { createLocalEventBus } from '../../shared/adapters/local/event-bus.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { main } from '../../shared/cli/main.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import {
  executedGenerations,
  plan,
  type RunView,
  step,
  stepOf,
  summary,
  useTestStack,
  waitForRun,
} from '../support/local-stack.ts';
import { secondProcessDeps } from '../support/second-process.ts';

const stack = useTestStack();

/** Another process on the same stack (a second Lambda container): same store, executions and bus. */
const deps = () => secondProcessDeps(stack);

const echo = (id: string, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

async function finishedRun(steps: Parameters<typeof plan>[1]): Promise<RunView> {
  const runId = await stack.startRun({ plan: plan('invalidation', steps) });
  const done = await waitForRun(stack, runId);
  expect(done.status, summary(done)).toBe('complete');
  return done;
}

const runExecutions = (runId: string): string[] =>
  stack.executions
    .list()
    .filter((info) => info.machine === 'run' && info.name.startsWith(`run-${runId}`))
    .map((info) => info.name)
    .sort();

/** Attempts of a run as `stepId → [generation#attempt]`. */
async function attempts(runId: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const a of await stack.store.listAttempts(runId))
    out[a.stepId] = [...(out[a.stepId] ?? []), `${a.generation}#${a.attempt}`];
  return out;
}

const regenerated = (ids: string[], generation: number) => (run: RunView) =>
  run.status === 'complete' &&
  ids.every((id) => stepOf(run, id).generation === generation && stepOf(run, id).status === 'succeeded');

const invalidate = (runId: string, stepId: string, body?: unknown) =>
  stack.request('POST', `/runs/${runId}/steps/${stepId}/invalidate`, body);

describe('invalidating a finished run', () => {
  it('re-runs exactly the downstream closure, reopens the run and reaches a new terminal state', async () => {
    const done = await finishedRun([
      echo('a'),
      echo('w', { dependsOn: ['a'] }),
      echo('d', { dependsOn: ['w'] }),
      echo('e', { dependsOn: ['a'] }),
      echo('u'),
      echo('z', { dependsOn: ['d', 'e'] }),
    ]);
    const { runId } = done;
    const before = await stack.store.getRun(runId);

    const answer = await invalidate(runId, 'w', { reason: 'the data under w changed' });

    expect(answer).toEqual({ status: 202, json: { runId, stepIds: ['w', 'd', 'z'], reopened: true } });
    const again = await waitForRun(stack, runId, regenerated(['w', 'd', 'z'], 2));
    expect(again.status, summary(again)).toBe('complete');
    expect(['a', 'e', 'u'].map((id) => stepOf(again, id).generation)).toEqual([1, 1, 1]);
    expect(executedGenerations(stack, runId)).toEqual({
      a: [1],
      w: [1, 2],
      d: [1, 2],
      e: [1],
      u: [1],
      z: [1, 2],
    });
    expect(await attempts(runId)).toEqual({
      a: ['1#1'],
      d: ['1#1', '2#1'],
      e: ['1#1'],
      u: ['1#1'],
      w: ['1#1', '2#1'],
      z: ['1#1', '2#1'],
    });
    expect(runExecutions(runId)).toEqual([`run-${runId}`, `run-${runId}-o1`]);
    const after = await stack.store.getRun(runId);
    expect(after).toMatchObject({ status: 'complete', reopened: 1, previousTerminals: [before?.terminal] });
    expect(after?.terminal?.at).not.toBe(before?.terminal?.at);
    const w = await stack.store.getStep(runId, 'w');
    expect(w?.history).toEqual([expect.objectContaining({ generation: 1, status: 'succeeded' })]);
    // The ended generation's output stays on its attempt's record.
    expect(await stack.store.getAttempt(runId, 'w', { generation: 1, attempt: 1 })).toMatchObject({
      outcome: 'succeeded',
      output: { value: 'w' },
    });
    const types = (await stack.store.listEvents(runId)).map((e) => e.type);
    expect(types.filter((t) => t === 'StepsInvalidated')).toHaveLength(1);
    expect(types.filter((t) => t === 'RunFinished')).toHaveLength(2);
    expect(types).toContain('RunReopened');
  });

  it('invalidates every step of a group and what waits for the group', async () => {
    const { runId } = await finishedRun([
      echo('first'),
      { id: 'g', title: 'Group', target: null, dependsOn: ['first'] },
      echo('g1', { parentId: 'g' }),
      echo('g2', { parentId: 'g', dependsOn: ['g1'] }),
      echo('after', { dependsOn: ['g'] }),
      echo('aside'),
    ]);

    const answer = await invalidate(runId, 'g');

    expect(answer).toEqual({ status: 202, json: { runId, stepIds: ['g1', 'g2', 'after'], reopened: true } });
    const again = await waitForRun(stack, runId, regenerated(['g1', 'g2', 'after'], 2));
    expect(['first', 'aside'].map((id) => stepOf(again, id).generation)).toEqual([1, 1]);
    expect(executedGenerations(stack, runId).first).toEqual([1]);
  });

  it('answers 404 for an unknown run or step, and 409 for a cancelled run', async () => {
    const { runId } = await finishedRun([echo('only')]);
    expect((await invalidate('no-such-run', 'only')).status).toBe(404);
    expect((await invalidate(runId, 'no-such-step')).status).toBe(404);
    expect((await invalidate(runId, 'only', { reason: '' })).status).toBe(400);

    const sleeping = await stack.startRun({
      plan: plan('cancel me', [step(stack, 's', T.sleep, { input: { ms: 5000 } })]),
    });
    await waitForRun(stack, sleeping, (run) => run.status === 'running');
    await stack.request('POST', `/runs/${sleeping}/cancel`);
    expect((await invalidate(sleeping, 's')).status).toBe(409);
  });
});

describe('cairn invalidate', () => {
  it('invalidates a step of a finished run through the API and reports the new generations', async () => {
    const { runId } = await finishedRun([echo('a'), echo('b', { dependsOn: ['a'] })]);
    const out: string[] = [];
    const err: string[] = [];

    const code = await main(['invalidate', runId, 'b', '--reason', 'from the terminal'], {
      stdout: (t) => out.push(t),
      stderr: (t) => err.push(t),
      env: { CAIRN_API_URL: stack.url, CAIRN_API_TOKEN: stack.token },
      cwd: process.cwd(),
    });

    expect([code, err.join('')]).toEqual([0, '']);
    expect(out.join('')).toContain(`run ${runId}: b start a new generation; the run reopened`);
    const again = await waitForRun(stack, runId, regenerated(['b'], 2));
    expect(stepOf(again, 'a').generation).toBe(1);
    const invalidated = (await stack.store.listEvents(runId)).find((e) => e.type === 'StepsInvalidated');
    expect(invalidated?.detail).toMatchObject({ stepIds: ['b'], reason: 'from the terminal' });
  });
});

describe('ResourceChanged on the bus', () => {
  const changed = (resourceKey: string, deliveryId: string) =>
    stack.bus.publish([{ detailType: 'ResourceChanged', detail: { resourceKey, source: 'github', deliveryId } }]);

  it('re-runs the watching step and its downstream, once per event however often or late it is delivered', async () => {
    const key = `repo:${randomUUID()}`;
    const { runId } = await finishedRun([
      echo('a'),
      echo('w', { dependsOn: ['a'], watches: [key] }),
      echo('d', { dependsOn: ['w'] }),
      echo('u'),
    ]);
    const older = new Date(Date.now() - 60_000);

    await changed(key, 'delivery-1');
    const again = await waitForRun(stack, runId, regenerated(['w', 'd'], 2));

    expect(['a', 'u'].map((id) => stepOf(again, id).generation)).toEqual([1, 1]);
    const counted = executedGenerations(stack, runId);
    expect(counted).toEqual({ a: [1], w: [1, 2], d: [1, 2], u: [1] });

    // The same delivery again, twice at once: the event id is the same, so nothing happens.
    await Promise.all([changed(key, 'delivery-1'), changed(key, 'delivery-1')]);
    await stack.bus.drain();
    // An older change (another delivery) arriving after the newer one: the new generation already saw it.
    const stale = createLocalEventBus({ clock: () => older });
    const envelopes: unknown[] = [];
    stale.subscribe({ 'detail-type': ['ResourceChanged'] }, (event) => {
      envelopes.push(event);
    });
    await stale.publish([{ detailType: 'ResourceChanged', detail: { resourceKey: key, deliveryId: 'delivery-0' } }]);
    await stale.drain();
    const handler = createInvalidatorHandler({ invalidator: createInvalidator(deps()) });
    // The run is told of it (the invalidator does not judge it), and its decider moves nothing: counted below.
    const late = await handler(envelopes[0]);
    expect(late).toMatchObject({ runs: [runId] });

    await new Promise((resolve) => setTimeout(resolve, 200));
    const settled = await waitForRun(stack, runId);
    expect(settled.status).toBe('complete');
    expect(executedGenerations(stack, runId)).toEqual(counted);
    expect((await attempts(runId)).w).toEqual(['1#1', '2#1']);
    expect((await stack.store.getRun(runId))?.reopened).toBe(1);
  });

  it('ignores watchers in runs that do not watch the key any more and keys nobody watches', async () => {
    const key = `repo:${randomUUID()}`;
    const handler = createInvalidatorHandler({ invalidator: createInvalidator(deps()) });
    const answer = await handler({
      id: randomUUID(),
      'detail-type': 'ResourceChanged',
      time: new Date().toISOString(),
      detail: { resourceKey: key },
    });
    expect(answer).toMatchObject({ runs: [] });
  });
});

describe('invalidating a running step', () => {
  it('supersedes the running attempt; its late result does not overwrite the new generation', async () => {
    const runId = await stack.startRun({
      plan: plan('long step', [step(stack, 's', T.sleep, { input: { ms: 800 } }), echo('d', { dependsOn: ['s'] })]),
    });
    await waitForRun(stack, runId, (run) => run.steps.find((s) => s.id === 's')?.status === 'running');
    const oldExecution = `${runId}-s-g1`;

    const answer = await invalidate(runId, 's', { reason: 'inputs moved' });

    expect(answer).toEqual({ status: 202, json: { runId, stepIds: ['s', 'd'], reopened: false } });
    expect(stack.executions.list().find((info) => info.name === oldExecution)?.status).toBe('ABORTED');
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    expect([stepOf(done, 's').generation, stepOf(done, 'd').generation]).toEqual([2, 2]);

    // The first generation's RunStep goes on after its execution was stopped (a Lambda invocation is not cut short):
    // its late result, once the sleep is over, is refused by the generation.
    await new Promise((resolve) => setTimeout(resolve, 900));
    await stack.executions.idle();
    const s = await stack.store.getStep(runId, 's');
    const current = await stack.store.getAttempt(runId, 's', { generation: 2, attempt: 1 });
    expect(s).toMatchObject({ generation: 2, status: 'succeeded', output: current?.output });
    expect(s?.history?.map((h) => [h.generation, h.status])).toEqual([[1, 'running']]);
    expect((await stack.store.getRun(runId))?.status).toBe('complete');
    expect(executedGenerations(stack, runId).s).toEqual([1, 2]);
    const succeeded = (await stack.store.listEvents(runId)).filter(
      (e) => e.type === 'StepSucceeded' && e.stepId === 's',
    );
    expect(succeeded.map((e) => e.generation)).toEqual([2]);
    expect((await attempts(runId)).s).toEqual(['1#1', '2#1']);
  });
});
