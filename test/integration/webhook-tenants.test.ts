/**
 * A webhook source's tenant (CAIRN_WEBHOOK_TENANTS) end to end on the embedded stack, through HTTP: two tenants' runs
 * (a tokens file) watch the same resource key; a signed delivery from a source mapped to acme invalidates acme's
 * watching run only, and one from a source of no tenant (the default one) invalidates neither.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { signWebhook } from '../../shared/webhooks/signature.ts';
import { requestAs } from '../support/api-reads.ts';
import { plan, step, useTestStack } from '../support/local-stack.ts';

const PEOPLE = {
  ana: { token: 'ana-token-0123456789', subject: 'ana', roles: ['operator'], tenant: 'acme' },
  bo: { token: 'bo-token-0123456789ab', subject: 'bo', roles: ['operator'], tenant: 'globex' },
};
type Who = keyof typeof PEOPLE;
const SECRETS = { 'acme-git': 'acme-git-secret', shared: 'shared-secret' };

const tokensFile = join(mkdtempSync(join(tmpdir(), 'cairn-webhook-tenants-')), 'tokens.json');
writeFileSync(tokensFile, JSON.stringify(Object.values(PEOPLE)));

const stack = useTestStack(() => ({
  settings: settingsFromEnv({
    CAIRN_TOKENS_FILE: tokensFile,
    CAIRN_WEBHOOK_SECRETS: JSON.stringify(SECRETS),
    CAIRN_WEBHOOK_TENANTS: JSON.stringify({ 'acme-git': 'acme' }),
  }),
}));

/** A request over the stack's socket, with this person's token. */
const call = (who: Who, method: string, path: string, body?: unknown) =>
  requestAs(stack.url, PEOPLE[who].token, method, path, body);

interface Run {
  status: string;
  steps: { id: string; generation: number; status: string }[];
}

async function until(who: Who, runId: string, holds: (run: Run) => boolean): Promise<Run> {
  for (let i = 0; i < 800; i++) {
    const run = (await call(who, 'GET', `/runs/${runId}`)).json as unknown as Run;
    if (holds(run)) return run;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`run ${runId} never got there`);
}

const generationOf = (run: Run, id: string) => run.steps.find((s) => s.id === id)?.generation;

async function watchingRun(who: Who, key: string): Promise<string> {
  const watching = plan(`watch ${key}`, [
    step(stack, 'a', T.echo, { input: { value: 'a' } }),
    step(stack, 'w', T.echo, { input: { value: 'w' }, dependsOn: ['a'], watches: [key] }),
  ]);
  const started = await call(who, 'POST', '/runs', { plan: watching });
  expect(started.status).toBe(202);
  const runId = started.json.runId as string;
  await until(who, runId, (run) => run.status === 'complete');
  return runId;
}

async function deliver(source: keyof typeof SECRETS, key: string): Promise<number> {
  const body = JSON.stringify({ resourceKeys: [key] });
  const headers = signWebhook(SECRETS[source], new TextEncoder().encode(body), Math.floor(Date.now() / 1000));
  const response = await fetch(`${stack.url}/webhooks/${source}`, { method: 'POST', body, headers });
  return response.status;
}

describe("a webhook source's tenant", () => {
  it("invalidates the watching runs of the source's tenant only", async () => {
    const key = `repo:${randomUUID()}`;
    const acme = await watchingRun('ana', key);
    const globex = await watchingRun('bo', key);

    // A source of no tenant reports the default tenant's resources: neither run watches those.
    expect(await deliver('shared', key)).toBe(202);
    await stack.bus.drain();
    await stack.settled();

    expect(await deliver('acme-git', key)).toBe(202);
    const again = await until('ana', acme, (run) => run.status === 'complete' && generationOf(run, 'w') === 2);
    expect(generationOf(again, 'a')).toBe(1);

    await stack.bus.drain();
    await stack.settled();
    const untouched = (await call('bo', 'GET', `/runs/${globex}`)).json as unknown as Run;
    expect(untouched.status).toBe('complete');
    expect(generationOf(untouched, 'w')).toBe(1);
    expect((await stack.store.getRun(globex))?.reopened).toBeUndefined();
    // The acme run was reopened once: the shared source's delivery moved nothing.
    expect((await stack.store.getRun(acme))?.reopened).toBe(1);
  }, 120_000);
});
