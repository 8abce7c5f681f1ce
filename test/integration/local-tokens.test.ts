/**
 * The embedded stack with a tokens file (`npm start -- --tokens FILE`): each person calls with their own token, the
 * run records who started it, its starter may not decide its gate (E_SELF_APPROVAL), another approver does, and
 * the real step state machine goes on with that decision.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { requestAs } from '../support/api-reads.ts';
import { plan, step, stepOf, useTestStack, waitForRun } from '../support/local-stack.ts';

const PEOPLE = {
  ana: { token: 'ana-token-0123456789', subject: 'ana', roles: ['operator', 'approver'] },
  bo: { token: 'bo-token-0123456789ab', subject: 'bo', roles: ['approver'] },
  vic: { token: 'vic-token-0123456789', subject: 'vic', roles: ['viewer'] },
};
type Who = keyof typeof PEOPLE;

const tokensFile = join(mkdtempSync(join(tmpdir(), 'cairn-local-tokens-')), 'tokens.json');
writeFileSync(tokensFile, JSON.stringify(Object.values(PEOPLE)));

const stack = useTestStack(() => ({ settings: settingsFromEnv({ CAIRN_TOKENS_FILE: tokensFile }) }));

/** A request over the stack's socket, with this person's token. */
const call = (who: Who, method: string, path: string, body?: unknown) =>
  requestAs(stack.url, PEOPLE[who].token, method, path, body);

async function pendingFor(who: Who, runId: string): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const { json } = await call(who, 'GET', `/approvals?status=pending&runId=${runId}`);
    const found = (json.approvals as { approvalId: string }[])[0];
    if (found) return found.approvalId;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no pending approval for ${who} in ${runId}`);
}

describe('the embedded stack with a tokens file', () => {
  it('calls its own API with the first token that may start runs, and lists who may call', () => {
    expect(stack.token).toBe(PEOPLE.ana.token);
    expect(stack.callers?.map((c) => c.subject)).toEqual(['ana', 'bo', 'vic']);
  });

  it("refuses the starter's decision on the gate, takes another approver's, and the run completes", async () => {
    const gated = plan('ship it', [
      step(stack, 'gate', T.approver, { input: {}, approval: { question: 'Ship it?', timeoutSeconds: 300 } }),
      step(stack, 'after', T.echo, { dependsOn: ['gate'], input: { value: 'after' } }),
    ]);
    expect((await call('vic', 'POST', '/runs', { plan: gated })).status).toBe(403);
    const started = await call('ana', 'POST', '/runs', { plan: gated });
    expect(started.status).toBe(202);
    const runId = started.json.runId as string;

    const approvalId = await pendingFor('bo', runId);
    // Not in the starter's inbox, and refused when asked anyway.
    expect((await call('ana', 'GET', `/approvals?runId=${runId}`)).json.approvals).toEqual([]);
    const own = await call('ana', 'POST', `/approvals/${encodeURIComponent(approvalId)}`, { decision: 'approve' });
    expect(own.status).toBe(403);
    expect((own.json.error as { code: string }).code).toBe('E_SELF_APPROVAL');
    const viewer = await call('vic', 'POST', `/approvals/${encodeURIComponent(approvalId)}`, { decision: 'approve' });
    expect((viewer.json.error as { code: string }).code).toBe('E_FORBIDDEN');

    const decided = await call('bo', 'POST', `/approvals/${encodeURIComponent(approvalId)}`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    expect((decided.json.approval as { decidedBy: string }).decidedBy).toBe('bo');
    const done = await waitForRun(stack, runId);
    expect(done.status).toBe('complete');
    expect(stepOf(done, 'gate').output).toMatchObject({ approved: true });
    expect((await call('vic', 'GET', `/runs/${runId}`)).json.startedBy).toBe('ana');
  });
});
