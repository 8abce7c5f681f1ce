/**
 * A bound on each tenant's running runs, through the embedded stack's HTTP API with two tenants in a tokens file
 * (CAIRN_MAX_RUNNING_RUNS_PER_TENANT=2): acme's third and fourth runs wait `queued`, start oldest first as acme's
 * runs end, globex is never held by acme's queue, and a cancelled queued run leaves the queue and never starts. Each
 * run waits at a gate, so a test ends a run by deciding its gate.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { requestAs } from '../support/api-reads.ts';
import { plan, step, useTestStack } from '../support/local-stack.ts';

const PEOPLE = {
  ana: { token: 'ana-token-0123456789', subject: 'ana', roles: ['operator'], tenant: 'acme' },
  ari: { token: 'ari-token-0123456789', subject: 'ari', roles: ['approver'], tenant: 'acme' },
  bo: { token: 'bo-token-0123456789ab', subject: 'bo', roles: ['operator'], tenant: 'globex' },
  bea: { token: 'bea-token-0123456789', subject: 'bea', roles: ['approver'], tenant: 'globex' },
};
type Who = keyof typeof PEOPLE;

const tokensFile = join(mkdtempSync(join(tmpdir(), 'cairn-admission-')), 'tokens.json');
writeFileSync(tokensFile, JSON.stringify(Object.values(PEOPLE)));

const stack = useTestStack(() => ({
  settings: settingsFromEnv({ CAIRN_TOKENS_FILE: tokensFile, CAIRN_MAX_RUNNING_RUNS_PER_TENANT: '2' }),
}));

/** A request over the stack's socket, with this person's token. */
const call = (who: Who, method: string, path: string, body?: unknown) =>
  requestAs(stack.url, PEOPLE[who].token, method, path, body);

const gated = (name: string) =>
  plan(name, [step(stack, 'gate', T.approver, { input: {}, approval: { question: `${name}?`, timeoutSeconds: 300 } })]);

async function start(who: Who, name: string): Promise<{ runId: string; status: string }> {
  const answer = await call(who, 'POST', '/runs', { plan: gated(name) });
  expect(answer.status).toBe(202);
  return answer.json as { runId: string; status: string };
}

const statusOf = async (who: Who, runId: string): Promise<string> =>
  (await call(who, 'GET', `/runs/${runId}`)).json.status as string;

async function until<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 800; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Waits for the run's gate and approves it as `who`: the run then completes and frees its slot. */
async function finish(who: Who, runId: string): Promise<void> {
  const approvalId = await until(`the gate of ${runId}`, async () => {
    const { json } = await call(who, 'GET', `/approvals?status=pending&runId=${runId}`);
    return (json.approvals as { approvalId: string }[])[0]?.approvalId;
  });
  expect(
    (await call(who, 'POST', `/approvals/${encodeURIComponent(approvalId)}`, { decision: 'approve' })).status,
  ).toBe(200);
  await until(`${runId} to complete`, async () => ((await statusOf(who, runId)) === 'complete' ? true : undefined));
}

/** Waits until the run is past `queued` (its gate waits for a person: it shows paused, or running on its way). */
const started = (who: Who, runId: string) =>
  until(`${runId} to start`, async () => {
    const status = await statusOf(who, runId);
    return status === 'queued' || status === 'planning' ? undefined : status;
  });

const listed = async (who: Who, status: string): Promise<string[]> =>
  ((await call(who, 'GET', `/runs?status=${status}`)).json.runs as { runId: string }[]).map((r) => r.runId);

describe('admission per tenant (two runs of a tenant at once)', () => {
  it("queues a tenant's third run, starts its queue oldest first as runs end, and never holds another tenant", async () => {
    const first = await start('ana', 'a1');
    const second = await start('ana', 'a2');
    expect([first.status, second.status]).toEqual(['planning', 'planning']);
    const third = await start('ana', 'a3');
    const fourth = await start('ana', 'a4');
    expect([third.status, fourth.status]).toEqual(['queued', 'queued']);
    expect(await statusOf('ana', third.runId)).toBe('queued');
    expect((await listed('ana', 'queued')).sort()).toEqual([third.runId, fourth.runId].sort());

    // Globex has slots of its own: acme's queue does not hold its runs, and its listing shows none of acme's.
    const other = await start('bo', 'g1');
    expect(other.status).toBe('planning');
    await started('bo', other.runId);
    expect(await listed('bo', 'queued')).toEqual([]);

    await started('ana', first.runId);
    await started('ana', second.runId);
    expect(await statusOf('ana', third.runId)).toBe('queued');

    // One of acme's runs ends: the oldest queued run starts, the newer one still waits.
    await finish('ari', second.runId);
    await started('ana', third.runId);
    expect(await statusOf('ana', fourth.runId)).toBe('queued');

    await finish('ari', first.runId);
    await started('ana', fourth.runId);
    expect(await listed('ana', 'queued')).toEqual([]);

    const events = (await call('ana', 'GET', `/runs/${third.runId}/events`)).json.events as { type: string }[];
    expect(events.map((e) => e.type)).toContain('RunAdmitted');
    await finish('ari', third.runId);
    await finish('ari', fourth.runId);
    await finish('bea', other.runId);
  }, 120_000);

  it('takes a cancelled queued run out of the queue: it never starts, and the next one does', async () => {
    const holding = [await start('ana', 'h1'), await start('ana', 'h2')];
    const cancelled = await start('ana', 'c1');
    const next = await start('ana', 'n1');
    expect([cancelled.status, next.status]).toEqual(['queued', 'queued']);

    const answer = await call('ana', 'POST', `/runs/${cancelled.runId}/cancel`, {});
    expect(answer.status).toBe(200);
    expect(answer.json.status).toBe('cancelled');
    expect(await listed('ana', 'queued')).toEqual([next.runId]);

    for (const run of holding) await started('ana', run.runId);
    await finish('ari', holding[0]?.runId ?? '');
    await started('ana', next.runId);
    expect(await statusOf('ana', cancelled.runId)).toBe('cancelled');
    const events = (await call('ana', 'GET', `/runs/${cancelled.runId}/events`)).json.events as { type: string }[];
    expect(events.map((e) => e.type)).not.toContain('RunAdmitted');
    expect(events.map((e) => e.type)).not.toContain('RunStarted');

    await finish('ari', holding[1]?.runId ?? '');
    await finish('ari', next.runId);
  }, 120_000);
});
