/**
 * An invalidation repeated, through the embedded stack: the bus's redelivery of a ResourceChanged, or a client's
 * retry with the same Idempotency-Key after its answer was lost. The repeat must move each step of the scope exactly
 * once: neither leave a step of the scope nobody starts (the run would stay open) nor start a generation twice. An
 * invalidation is one decision of the run's decider (its moves commit together, under the invalidation's key), so a
 * try that fails part-way through its moves, which these tests used to hold, cannot happen any more.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { executedGenerations, plan, type RunView, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
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

describe('a ResourceChanged delivered again while its first delivery is being taken', () => {
  it('moves the scope once, each step once, and the run finishes again', async () => {
    const key = `repo:${randomUUID()}`;
    const runId = await finishedChain('invalidation delivered twice at once', key);
    const deliveryId = randomUUID();
    const delivery = () =>
      stack.bus.publish([{ detailType: 'ResourceChanged', detail: { resourceKey: key, deliveryId } }]);

    // Before, a try failed part-way through its moves, and its redelivery found w in a generation that had not run:
    // the run stayed open. The moves are one decision now; the bus's redelivery names the same change.
    await Promise.all([delivery(), delivery(), delivery()]);
    const again = await waitForRun(stack, runId, regenerated, 20_000);
    await stack.settled();

    expectScopeMovedOnce(runId, again);
    expect((await stack.store.getRun(runId))?.reopened).toBe(1);
  }, 60_000);
});

describe('an invalidation request whose answer was lost after it was taken', () => {
  it('answers the retry with the same Idempotency-Key as it answered the first, and starts each generation once', async () => {
    const runId = await finishedChain('invalidation answer lost', `repo:${randomUUID()}`);
    // The answer is kept for the key's retries, and the API hears its write failed (a timeout): it answers 503.
    const lost = faults.throwOn({
      method: 'completeIdempotent',
      when: 'after',
      name: 'TimeoutError',
      match: (call) => typeof call.args[0] === 'string' && call.args[0].startsWith(`invalidate#${runId}#`),
    });
    const invalidate = invalidationOfW(runId);

    const first = await invalidate();
    expect(first.status, JSON.stringify(first.json)).toBe(503);
    const retried = await invalidate();
    const again = await waitForRun(stack, runId, regenerated, 20_000);
    await stack.settled();

    expect(lost.count()).toBe(1);
    expect(retried).toEqual({ status: 202, json: { runId, stepIds: ['w', 'd', 'e'], reopened: true } });
    expectScopeMovedOnce(runId, again);
    // A third try is answered the same, and moves nothing.
    expect(await invalidate()).toEqual(retried);
    await stack.settled();
    expectScopeMovedOnce(runId, await waitForRun(stack, runId));
  }, 60_000);
});
