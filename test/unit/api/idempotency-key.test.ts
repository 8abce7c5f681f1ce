/**
 * An Idempotency-Key names one request. Sent again with the same body (in any key order or layout) it answers with
 * the first run; sent with another body it is refused with 422 E_IDEMPOTENCY_MISMATCH, and nothing new is stored or
 * started.
 */
import { describe, expect, it } from 'vitest';
import { runRequestHash } from '../../../shared/api/runs.ts';
import { echoStep, harness, planOf } from './harness.ts';

type Answer = { runId?: string; status?: string; error?: { code: string; message: string } };

const post = (h: Awaited<Awaited<ReturnType<typeof harness>>>, key: string, body: unknown) =>
  h.request('POST', '/runs', { body, headers: { 'idempotency-key': key } });

async function runCount(h: Awaited<Awaited<ReturnType<typeof harness>>>): Promise<number> {
  const res = await h.request('GET', '/runs');
  return ((await res.json()) as { runs: unknown[] }).runs.length;
}

describe('POST /runs with an Idempotency-Key used before', () => {
  it('refuses another objective under the same key with 422 E_IDEMPOTENCY_MISMATCH', async () => {
    const h = await harness();
    const first = await post(h, 'k1', { objective: 'first', directTarget: 'tool:echo' });
    expect(first.status).toBe(202);

    const second = await post(h, 'k1', { objective: 'second', directTarget: 'tool:echo' });

    expect(second.status).toBe(422);
    const body = (await second.json()) as Answer;
    expect(body.error?.code).toBe('E_IDEMPOTENCY_MISMATCH');
    expect(body.error?.message).toMatch(/Idempotency-Key .*different request/);
    expect(body.runId).toBeUndefined();
    expect(await runCount(h)).toBe(1);
    expect(h.executions.starts).toHaveLength(1);
  });

  it('refuses a submitted plan under a key first used for an objective, and the other way round', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a')], 'first');
    expect((await post(h, 'k-obj', { objective: 'first', directTarget: 'tool:echo' })).status).toBe(202);
    expect((await post(h, 'k-plan', { plan })).status).toBe(202);

    const swapped = await Promise.all([
      post(h, 'k-obj', { plan }),
      post(h, 'k-plan', { objective: 'first', directTarget: 'tool:echo' }),
    ]);

    expect(swapped.map((r) => r.status)).toEqual([422, 422]);
    expect(await runCount(h)).toBe(2);
  });

  it('refuses a plan that differs in one nested value', async () => {
    const h = await harness();
    const plan = planOf([echoStep('a', { input: { value: 'one' } })]);
    const changed = planOf([echoStep('a', { input: { value: 'two' } })]);
    expect((await post(h, 'k2', { plan })).status).toBe(202);
    const res = await post(h, 'k2', { plan: changed });
    expect(res.status).toBe(422);
    expect(((await res.json()) as Answer).error?.code).toBe('E_IDEMPOTENCY_MISMATCH');
  });

  it('answers the first run for the same body, whatever its key order and layout', async () => {
    const h = await harness();
    const first = await post(h, 'k3', '{"objective":"same","directTarget":"tool:echo"}');
    const again = await post(h, 'k3', '{\n  "directTarget": "tool:echo",\n  "objective": "same"\n}\n');
    const plan = planOf([echoStep('a', { input: { value: 'v' } })]);
    const planFirst = await post(h, 'k4', { plan });
    // The same plan with every object's keys reversed.
    const reversed = JSON.stringify({ plan }, (_key, value: unknown) =>
      value && typeof value === 'object' && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).reverse())
        : value,
    );
    const planAgain = await post(h, 'k4', reversed);

    expect([first.status, again.status, planFirst.status, planAgain.status]).toEqual([202, 202, 202, 202]);
    const [a, b, c, d] = (await Promise.all([first, again, planFirst, planAgain].map((r) => r.json()))) as Answer[];
    expect(b?.runId).toBe(a?.runId);
    expect(d?.runId).toBe(c?.runId);
    expect(await runCount(h)).toBe(2);
  });

  it('lets exactly one of two concurrent requests with different bodies have the key', async () => {
    const h = await harness();
    const answers = await Promise.all([
      post(h, 'k5', { objective: 'one', directTarget: 'tool:echo' }),
      post(h, 'k5', { objective: 'two', directTarget: 'tool:echo' }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([202, 422]);
    expect(await runCount(h)).toBe(1);
    expect(h.executions.starts).toHaveLength(1);
  });

  it('refuses a different body under the key of a finished run too', async () => {
    const h = await harness();
    const first = (await (await post(h, 'k6', { objective: 'x', directTarget: 'tool:echo' })).json()) as Answer;
    await h.request('POST', `/runs/${first.runId}/cancel`);
    const same = await post(h, 'k6', { objective: 'x', directTarget: 'tool:echo' });
    const other = await post(h, 'k6', { objective: 'y', directTarget: 'tool:echo' });
    expect(same.status).toBe(202);
    expect(await same.json()).toEqual({ runId: first.runId, status: 'cancelled' });
    expect(other.status).toBe(422);
  });
});

describe('runRequestHash', () => {
  it('is the same for the same JSON in any key order and differs for any other value', () => {
    expect(runRequestHash({ a: 1, b: { c: [1, 2], d: null } })).toBe(
      runRequestHash({ b: { d: null, c: [1, 2] }, a: 1 }),
    );
    expect(runRequestHash({ a: [1, 2] })).not.toBe(runRequestHash({ a: [2, 1] }));
    expect(runRequestHash({ a: '1' })).not.toBe(runRequestHash({ a: 1 }));
    expect(runRequestHash({ a: 1 })).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
