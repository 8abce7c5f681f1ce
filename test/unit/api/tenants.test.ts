/**
 * Tenants through the HTTP API: two callers of two tenants (a tokens file), each seeing only its own runs,
 * approvals, events and planning jobs; the other's is a 404 on every route, never a 403, and never listed.
 */
import { describe, expect, it } from 'vitest';
import { parseTokensFile } from '../../../shared/api/tokens-file.ts';
import { approvalRecord, echoStep, gateStep, harness, planOf, seedRun, stepRecord } from './harness.ts';

const ANA = { token: 'ana-token-0123456789', subject: 'ana', roles: ['admin'], tenant: 'acme' };
const BO = { token: 'bo-token-0123456789ab', subject: 'bo', roles: ['admin'], tenant: 'globex' };
const CY = { token: 'cy-token-0123456789ab', subject: 'cy', roles: ['admin'] };

const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

async function twoTenants() {
  const h = await harness({ auth: { kind: 'tokens', tokens: parseTokensFile(JSON.stringify([ANA, BO, CY])) } });
  // Acme's run, waiting at a gate, with its approval (an approval is its run's tenant's).
  await seedRun(
    h,
    'run-acme',
    planOf([echoStep('a'), gateStep('gate', { dependsOn: ['a'] })]),
    [
      stepRecord('run-acme', 'a', { status: 'succeeded' }),
      stepRecord('run-acme', 'gate', { status: 'awaiting_approval' }),
    ],
    { tenant: 'acme', startedBy: 'dora' },
  );
  await h.store.putApproval(approvalRecord('ap-acme', { runId: 'run-acme', tenant: 'acme' }));
  await seedRun(h, 'run-globex', planOf([echoStep('a')]), [stepRecord('run-globex', 'a', { status: 'running' })], {
    tenant: 'globex',
    startedBy: 'bo',
  });
  return h;
}

/** Every route that names a run, approval or job, as another tenant would call it. */
const ROUTES: readonly (readonly [string, string, unknown?])[] = [
  ['GET', '/runs/run-acme'],
  ['GET', '/runs/run-acme/plan'],
  ['GET', '/runs/run-acme/plan/diff'],
  ['GET', '/runs/run-acme/events'],
  ['POST', '/runs/run-acme/cancel', {}],
  ['GET', '/runs/run-acme/commands/cancel-x'],
  ['POST', '/runs/run-acme/steps/a/invalidate', { reason: 'stale' }],
  ['POST', '/runs/run-acme/steps/a/compensation', { action: 'retry' }],
  ['POST', '/runs/run-acme/replan', { reason: 'again' }],
  ['POST', '/runs/run-acme/budget', { maxReplans: 5 }],
  ['GET', '/runs/run-acme/steps/a'],
  ['GET', '/runs/run-acme/revisions'],
  ['GET', '/runs/run-acme/revisions/1/diff'],
  ['GET', '/runs/run-acme/timeline'],
  ['GET', '/approvals/ap-acme'],
  ['POST', '/approvals/ap-acme', { decision: 'approve' }],
  ['POST', '/approvals/ap-acme/check', { output: {} }],
];

describe('tenants', () => {
  it("answers 404 E_NOT_FOUND, never 403, for another tenant's run or approval on every route", async () => {
    const h = await twoTenants();
    for (const [method, path, body] of ROUTES) {
      const res = await h.request(method, path, { ...as(BO.token), ...(body === undefined ? {} : { body }) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code, `${method} ${path}`).toBe('E_NOT_FOUND');
    }
    // Nothing changed: the run still waits at its gate, the approval is pending.
    expect((await h.store.getRun('run-acme'))?.status).toBe('running');
    expect((await h.store.getApproval('ap-acme'))?.status).toBe('pending');
    // Its own tenant reads it.
    expect((await h.request('GET', '/runs/run-acme', as(ANA.token))).status).toBe(200);
    expect((await h.request('GET', '/approvals/ap-acme', as(ANA.token))).status).toBe(200);
  });

  it("lists only the caller's tenant's runs and approvals", async () => {
    const h = await twoTenants();
    const runsOf = async (token: string, query = '') =>
      ((await (await h.request('GET', `/runs${query}`, as(token))).json()) as { runs: { runId: string }[] }).runs.map(
        (r) => r.runId,
      );
    expect(await runsOf(ANA.token)).toEqual(['run-acme']);
    expect(await runsOf(BO.token)).toEqual(['run-globex']);
    expect(await runsOf(BO.token, '?status=running')).toEqual(['run-globex']);
    expect(await runsOf(BO.token, '?q=run')).toEqual(['run-globex']);
    // A caller without a tenant is in the default one, where neither is.
    expect(await runsOf(CY.token)).toEqual([]);
    const approvalsOf = async (token: string) =>
      (
        (await (await h.request('GET', '/approvals?status=pending', as(token))).json()) as {
          approvals: { approvalId: string }[];
        }
      ).approvals.map((a) => a.approvalId);
    expect(await approvalsOf(ANA.token)).toEqual(['ap-acme']);
    expect(await approvalsOf(BO.token)).toEqual([]);
    const filtered = await h.request('GET', '/approvals?runId=run-acme', as(BO.token));
    expect(((await filtered.json()) as { approvals: unknown[] }).approvals).toEqual([]);
  });

  it("keeps each tenant's Idempotency-Keys apart, and records the starter's tenant on the run", async () => {
    const h = await twoTenants();
    const start = (token: string) =>
      h.request('POST', '/runs', {
        ...as(token),
        headers: { ...as(token).headers, 'idempotency-key': 'same-key' },
        body: { objective: 'say hello', directTarget: 'tool:echo' },
      });
    const first = (await (await start(ANA.token)).json()) as { runId: string };
    const other = (await (await start(BO.token)).json()) as { runId: string };
    const again = (await (await start(ANA.token)).json()) as { runId: string };
    expect(other.runId).not.toBe(first.runId);
    expect(again.runId).toBe(first.runId);
    expect((await h.store.getRun(first.runId))?.tenant).toBe('acme');
    expect((await h.store.getRun(other.runId))?.tenant).toBe('globex');
    // The default tenant's runs carry no tenant, as they did before tenants.
    const plain = (await (await start(CY.token)).json()) as { runId: string };
    expect((await h.store.getRun(plain.runId))?.tenant).toBeUndefined();
    expect((await h.request('GET', `/runs/${first.runId}/events`, as(BO.token))).status).toBe(404);
  });

  it("answers 404 for another tenant's planning job", async () => {
    const h = await twoTenants();
    const asked = await h.request('POST', '/plans', { ...as(ANA.token), body: { objective: 'say hello' } });
    expect(asked.status).toBe(202);
    const { jobId } = (await asked.json()) as { jobId: string };
    await h.jobsIdle();
    expect((await h.store.getPlanJob(jobId))?.tenant).toBe('acme');
    expect((await h.request('GET', `/plans/${jobId}`, as(ANA.token))).status).toBe(200);
    expect((await h.request('GET', `/plans/${jobId}`, as(BO.token))).status).toBe(404);
  });

  it('names the tenant in GET /me', async () => {
    const h = await twoTenants();
    expect(await (await h.request('GET', '/me', as(BO.token))).json()).toMatchObject({ tenant: 'globex' });
    expect(await (await h.request('GET', '/me', as(CY.token))).json()).toMatchObject({ tenant: 'default' });
  });
});
