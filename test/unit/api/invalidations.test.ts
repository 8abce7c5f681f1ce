import { describe, expect, it } from 'vitest';
import type { RunCommandInput } from '../../../shared/engine/run/commands.ts';
import { type Reply, refuse } from '../../../shared/engine/run/decision.ts';
import { harness, runRecord, scriptedMailbox } from './harness.ts';

type Invalidate = Extract<RunCommandInput, { kind: 'Invalidate' }>;

/** A harness whose runs' deciders answer invalidations as `answer` says. */
async function withDecider(answer: (command: Invalidate) => Reply) {
  const script = scriptedMailbox((_runId, command) =>
    command.kind === 'Invalidate' ? answer(command) : refuse(409, 'E_CONFLICT', `unexpected ${command.kind}`),
  );
  const h = await harness({ mailbox: script.mailbox });
  await h.store.createRun(runRecord('run-1'));
  const invalidations = () => script.asked.map((a) => a.command as Invalidate);
  return { h, invalidations };
}

const moved = (command: Invalidate): Reply => ({
  ok: true,
  value: { stepIds: [...command.roots, 'after'], reopened: false },
});

describe('POST /runs/{runId}/steps/{stepId}/invalidate', () => {
  it('answers 202 with the steps the decider moved, passing the reason and who asked', async () => {
    const { h, invalidations } = await withDecider(moved);

    const response = await h.request('POST', '/runs/run-1/steps/w/invalidate', { body: { reason: 'the repo moved' } });

    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ runId: 'run-1', stepIds: ['w', 'after'], reopened: false });
    expect(invalidations()).toEqual([
      expect.objectContaining({ kind: 'Invalidate', roots: ['w'], reason: 'the repo moved', by: expect.any(String) }),
    ]);
  });

  it('invalidates with the default reason when the request has no body', async () => {
    const { h, invalidations } = await withDecider(moved);

    const response = await h.request('POST', '/runs/run-1/steps/w/invalidate');

    expect(response.status).toBe(202);
    expect(invalidations()[0]?.reason).toBe('invalidated on request');
  });

  it('answers a retry with the same Idempotency-Key with the first answer, without asking the decider again', async () => {
    const { h, invalidations } = await withDecider(moved);
    const retry = () =>
      h.request('POST', '/runs/run-1/steps/w/invalidate', { headers: { 'idempotency-key': 'req-7' } });

    const first = await retry();
    const second = await retry();

    expect(await second.json()).toEqual(await first.json());
    expect(invalidations().map((c) => c.key)).toEqual(['request#req-7']);
  });

  it('names each request without a key apart, so two requests invalidate twice', async () => {
    const { h, invalidations } = await withDecider(moved);

    await h.request('POST', '/runs/run-1/steps/w/invalidate');
    await h.request('POST', '/runs/run-1/steps/w/invalidate');

    const [a, b] = invalidations().map((c) => c.key);
    expect(a).not.toEqual(b);
  });

  it("answers 404 for an unknown run without asking, and the decider's 404 for an unknown step", async () => {
    const { h, invalidations } = await withDecider((c) =>
      refuse(404, 'E_NOT_FOUND', `run run-1 has no step ${c.roots[0]}`),
    );

    expect((await h.request('POST', '/runs/ghost/steps/w/invalidate')).status).toBe(404);
    expect(invalidations()).toEqual([]);
    expect((await h.request('POST', '/runs/run-1/steps/ghost/invalidate')).status).toBe(404);
  });

  it("passes the decider's refusal on (409), and answers 400 for a bad body or key without asking", async () => {
    const { h, invalidations } = await withDecider(() => refuse(409, 'E_CONFLICT', 'run run-1 is cancelled'));

    const refused = await h.request('POST', '/runs/run-1/steps/w/invalidate', { body: {} });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('E_CONFLICT');
    const asked = invalidations().length;
    expect((await h.request('POST', '/runs/run-1/steps/w/invalidate', { body: { reason: ' ' } })).status).toBe(400);
    expect((await h.request('POST', '/runs/run-1/steps/w/invalidate', { body: { why: 'x' } })).status).toBe(400);
    const badKey = await h.request('POST', '/runs/run-1/steps/w/invalidate', { headers: { 'idempotency-key': 'a b' } });
    expect(badKey.status).toBe(400);
    expect(invalidations()).toHaveLength(asked);
  });

  it('lets a retry ask again after a refusal under the same key', async () => {
    let refusing = true;
    const { h, invalidations } = await withDecider((c) =>
      refusing ? refuse(409, 'E_CONFLICT', 'run run-1 is planning') : moved(c),
    );
    const send = () => h.request('POST', '/runs/run-1/steps/w/invalidate', { headers: { 'idempotency-key': 'k' } });

    expect((await send()).status).toBe(409);
    refusing = false;
    expect((await send()).status).toBe(202);
    expect(invalidations()).toHaveLength(2);
  });
});
