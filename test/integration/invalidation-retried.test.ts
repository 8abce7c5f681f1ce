/**
 * An invalidation whose first try failed part-way, through the embedded stack: some steps got their next generation,
 * then a store call failed (a throttle before it, or a write whose answer was lost). The repeat — the bus's
 * redelivery, or a client's retry with the same Idempotency-Key — must move each step of the scope exactly once:
 * neither skip the steps the first try did not reach (the run would stay open with a step nobody starts) nor start
 * a generation twice. A repeat that finds the run cancelled meanwhile is refused, once it has moved the rest (last case).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { eventually } from '../support/engine-stack.ts';
import {
  executedGenerations,
  plan,
  type RunView,
  statusOf,
  step,
  stepOf,
  summary,
  waitForRun,
} from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

const echo = (id: string, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

/** A finished chain a → w → d → e, where w watches `key`. */
async function finishedChain(objective: string, key: string): Promise<string> {
  const runId = await stack.startRun({
    plan: plan(objective, [
      echo('a'),
      echo('w', { dependsOn: ['a'], watches: [key] }),
      echo('d', { dependsOn: ['w'] }),
      echo('e', { dependsOn: ['d'] }),
    ]),
  });
  const done = await waitForRun(stack, runId);
  expect(done.status, summary(done)).toBe('complete');
  return runId;
}

/** `POST /runs/{runId}/steps/w/invalidate` as a client sends it, again with the same Idempotency-Key on each call. */
function invalidationOfW(runId: string): () => Promise<{ status: number; json: unknown }> {
  const idempotencyKey = randomUUID();
  return async () => {
    const answer = await fetch(`${stack.url}/runs/${runId}/steps/w/invalidate`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer test-token',
        'content-type': 'application/json',
        'idempotency-key': idempotencyKey,
      },
      body: JSON.stringify({ reason: 'changed' }),
    });
    return { status: answer.status, json: (await answer.json()) as unknown };
  };
}

const regenerated = (run: RunView) =>
  run.status === 'complete' && ['w', 'd', 'e'].every((id) => stepOf(run, id).generation === 2);

/** w, d and e each moved to generation 2 and ran it once; a stayed on its first. */
function expectScopeMovedOnce(runId: string, again: RunView): void {
  expect(
    again.steps.map((s) => `${s.id}${s.generation}`),
    summary(again),
  ).toEqual(['a1', 'w2', 'd2', 'e2']);
  expect(executedGenerations(stack, runId)).toEqual({ a: [1], w: [1, 2], d: [1, 2], e: [1, 2] });
}

describe('a ResourceChanged whose invalidation failed after its first writes', () => {
  it('moves the rest of the scope on redelivery, each step once, and the run finishes again', async () => {
    const key = `repo:${randomUUID()}`;
    const runId = await finishedChain('invalidation throttled part-way', key);
    const throttled = faults.throwOn({
      method: 'startGeneration',
      when: 'before',
      match: (call) => call.runId === runId && call.args[1] === 'd',
    });

    await stack.bus.publish([
      { detailType: 'ResourceChanged', detail: { resourceKey: key, deliveryId: randomUUID() } },
    ]);
    // Before, the redelivery found w in a generation that had not run, took it for fresh and invalidated nothing:
    // the run stayed open, w ready with no execution, d and e on their old results.
    const again = await waitForRun(stack, runId, regenerated, 20_000);
    await stack.settled();

    expect(throttled.count()).toBe(1);
    expectScopeMovedOnce(runId, again);
  }, 60_000);
});

describe('an invalidation request whose step write landed but whose answer was lost', () => {
  it('starts each generation once, whether the call finds its own write or the client retries', async () => {
    const runId = await finishedChain('invalidation answer lost', `repo:${randomUUID()}`);
    const lost = faults.throwOn({
      method: 'startGeneration',
      when: 'after',
      name: 'TimeoutError',
      match: (call) => call.runId === runId && call.args[1] === 'd',
    });
    const invalidate = invalidationOfW(runId);

    let answer = await invalidate();
    // A client retries a 503 with the same key (what a retry without the fix met: w and d moved twice).
    if (answer.status === 503) answer = await invalidate();
    const again = await waitForRun(stack, runId, regenerated, 20_000);
    await stack.settled();

    expect(lost.count()).toBe(1);
    expect(answer.status).toBe(202);
    expectScopeMovedOnce(runId, again);
  }, 60_000);
});

describe('an invalidation request cut short, then its run cancelled', () => {
  it('is refused when the client retries it (409), but first finishes its moves: nothing stands on what it ended', async () => {
    const runId = await stack.startRun({
      plan: plan('invalidation request cut by a cancel', [
        echo('a'),
        echo('w', { dependsOn: ['a'] }),
        echo('d', { dependsOn: ['w'] }),
        echo('e', { dependsOn: ['d'] }),
        step(stack, 'S', T.approver, { approval: { question: 'May S go?', timeoutSeconds: 120 } }),
      ]),
    });
    await waitForRun(stack, runId, (run) => ['a', 'w', 'd', 'e'].every((id) => statusOf(run, id) === 'succeeded'));
    // w's and d's moves land, then the process dies before e's (nothing in it tries again after a crash).
    const landed = eventually(
      () => faults.raw().getSteps(runId, ['w', 'd']),
      (moved) => moved.length === 2 && moved.every((s) => s.generation === 2),
      "w's and d's moves",
    );
    faults.throwOn({
      method: 'startGeneration',
      when: 'before',
      crash: true,
      until: landed,
      match: (call) => call.runId === runId && call.args[1] === 'e',
    });
    const invalidate = invalidationOfW(runId);

    const first = await invalidate();
    expect(first.status, JSON.stringify(first.json)).toBe(500);
    expect((await stack.request('POST', `/runs/${runId}/cancel`)).status).toBe(200);
    expect(await faults.raw().getStep(runId, 'e')).toMatchObject({ status: 'succeeded', generation: 1 });

    const retried = await invalidate();

    expect(retried.status, JSON.stringify(retried.json)).toBe(409);
    const done = await waitForRun(stack, runId);
    expect(
      ['w', 'd', 'e'].map((id) => `${id} ${stepOf(done, id).status} ${stepOf(done, id).generation}`),
      summary(done),
    ).toEqual(['w cancelled 2', 'd cancelled 2', 'e cancelled 2']);
  }, 60_000);
});
