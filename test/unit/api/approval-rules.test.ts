/**
 * Who may decide an approval, through the HTTP API: not the subject that started the run (E_SELF_APPROVAL, unless
 * the step allows it), only the groups a gate names (E_FORBIDDEN), both the catalog's and the step's rule, and an
 * inbox that lists only what the caller may decide.
 */
import { describe, expect, it } from 'vitest';
import type { ApiDeps } from '../../../shared/api/deps.ts';
import type { TokenEntry } from '../../../shared/api/tokens-file.ts';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import type { ApproverRules, PlanStep } from '../../../shared/plan/schema.ts';
import {
  approvalRecord,
  catalog,
  echoStep,
  gateStep,
  gateToken,
  harness,
  planOf,
  scriptedMailbox,
  seedRun,
  stepRecord,
  TOKEN,
} from './harness.ts';

type Json = Record<string, unknown>;

const person = (subject: string, roles: TokenEntry['roles'], groups?: string[]): TokenEntry => ({
  token: `token-of-${subject}-0123456789`,
  subject,
  roles,
  ...(groups === undefined ? {} : { groups }),
});

const PEOPLE = {
  ana: person('ana', ['operator', 'approver']),
  bo: person('bo', ['approver'], ['finance']),
  cy: person('cy', ['approver'], ['legal']),
  dan: person('dan', ['operator']),
  vic: person('vic', ['viewer']),
  adm: person('adm', ['admin']),
};
type Who = keyof typeof PEOPLE;
const as = (who: Who) => ({ authorization: `Bearer ${PEOPLE[who].token}` });

/** The harness's catalog with an approval rule on the gate's capability. */
const catalogWith = (approval: ApproverRules) =>
  loadCatalog({
    capabilities: catalog
      .capabilities()
      .map((capability) => (capability.target === 'human:approver' ? { ...capability, approval } : capability)),
  });

async function rulesHarness(overrides: Partial<ApiDeps> = {}) {
  return harness({ auth: { kind: 'tokens', tokens: Object.values(PEOPLE) }, ...overrides });
}

type Rules = Awaited<ReturnType<typeof rulesHarness>>;

/** A run started by `startedBy`, paused at its gate, with the approval `approvalId` waiting. */
async function gateOf(h: Rules, runId: string, startedBy: string, gate: Partial<PlanStep> = {}) {
  const plan = planOf([echoStep('before'), gateStep('gate', { dependsOn: ['before'], ...gate })]);
  await seedRun(
    h,
    runId,
    plan,
    [
      stepRecord(runId, 'before', { status: 'succeeded', output: { value: 'x' } }),
      stepRecord(runId, 'gate', { status: 'awaiting_approval' }),
    ],
    { startedBy },
  );
  const approvalId = `ap-${runId}`;
  await h.store.putApproval(approvalRecord(approvalId, { runId, taskToken: await gateToken(h, runId, 'gate') }));
  return approvalId;
}

async function decide(h: Rules, approvalId: string, who: Who, decision = 'approve') {
  const res = await h.request('POST', `/approvals/${approvalId}`, { headers: as(who), body: { decision } });
  return { status: res.status, body: (await res.json()) as { error?: { code: string; message: string } } & Json };
}

const approval = (body: Json) => body.approval as Json;

describe('POST /approvals/{id}: who may decide', () => {
  it('refuses the subject that started the run with 403 E_SELF_APPROVAL, and takes another approver', async () => {
    const h = await rulesHarness();
    const started = await h.request('POST', '/runs', {
      headers: as('ana'),
      body: { objective: 'ship it', directTarget: 'tool:echo' },
    });
    const { runId } = (await started.json()) as { runId: string };
    expect((await h.store.getRun(runId))?.startedBy).toBe('ana');
    // The run machine made its plan and reached the gate (as gateOf seeds it, keeping the started run's record).
    await h.store.putPlanRevision(runId, planOf([gateStep('gate')]), 'initial plan');
    await h.store.updateRun(runId, ['planning'], { status: 'running', revision: 1 });
    await h.store.putSteps([stepRecord(runId, 'gate', { status: 'awaiting_approval' })]);
    await h.store.putApproval(approvalRecord('ap1', { runId, taskToken: await gateToken(h, runId, 'gate') }));

    const own = await decide(h, 'ap1', 'ana');
    expect(own.status).toBe(403);
    expect(own.body.error).toEqual({
      code: 'E_SELF_APPROVAL',
      message: `ana started run ${runId}: someone else decides its approvals (unless the step says approval.allowSelf: true)`,
    });
    expect((await h.store.getApproval('ap1'))?.status).toBe('pending');
    expect(h.executions.successes).toEqual([]);

    const other = await decide(h, 'ap1', 'bo');
    expect(other.status).toBe(200);
    expect(approval(other.body).decidedBy).toBe('bo');
    expect(h.executions.successes[0]?.output).toMatchObject({ decision: 'approve', by: 'bo' });
  });

  it('lets the starter decide when the step says approval.allowSelf: true', async () => {
    const h = await rulesHarness();
    const id = await gateOf(h, 'run-a', 'ana', {
      approval: { question: 'Go?', timeoutSeconds: 300, allowSelf: true },
    });
    const own = await decide(h, id, 'ana');
    expect(own.status).toBe(200);
    expect(approval(own.body).decidedBy).toBe('ana');
  });

  it("keeps the rule when the step's capability says allowSelf: false, whatever the step says", async () => {
    const h = await rulesHarness({ catalog: catalogWith({ allowSelf: false }) });
    const id = await gateOf(h, 'run-a', 'ana', {
      approval: { question: 'Go?', timeoutSeconds: 300, allowSelf: true },
    });
    expect((await decide(h, id, 'ana')).body.error?.code).toBe('E_SELF_APPROVAL');
  });

  it("refuses an approver outside the gate's approvers with 403 E_FORBIDDEN naming the groups", async () => {
    const h = await rulesHarness();
    const id = await gateOf(h, 'run-a', 'dan', {
      approval: { question: 'Pay?', timeoutSeconds: 300, approvers: ['finance'] },
    });
    const outside = await decide(h, id, 'cy');
    expect(outside.status).toBe(403);
    expect(outside.body.error).toEqual({
      code: 'E_FORBIDDEN',
      message: 'only finance may decide this approval; cy is in legal',
      details: { approvers: ['finance'] },
    });
    expect((await decide(h, id, 'bo')).status).toBe(200);
  });

  it("holds both the catalog's groups and the step's: a plan narrows the catalog's rule, never widens it", async () => {
    const h = await rulesHarness({ catalog: catalogWith({ approvers: ['finance', 'legal'] }) });
    const narrowed = await gateOf(h, 'run-a', 'dan', {
      approval: { question: 'Pay?', timeoutSeconds: 300, approvers: ['legal'] },
    });
    expect((await decide(h, narrowed, 'bo')).body.error?.message).toBe(
      'only legal may decide this approval; bo is in finance',
    );
    expect((await decide(h, narrowed, 'cy')).status).toBe(200);

    const widened = await gateOf(h, 'run-b', 'dan', {
      approval: { question: 'Pay?', timeoutSeconds: 300, approvers: ['interns'] },
    });
    for (const who of ['bo', 'cy'] as const) expect((await decide(h, widened, who)).status, who).toBe(403);
  });

  it("takes the catalog's rule for a step that names none", async () => {
    const h = await rulesHarness({ catalog: catalogWith({ approvers: ['legal'] }) });
    const id = await gateOf(h, 'run-a', 'dan');
    expect((await decide(h, id, 'bo')).status).toBe(403);
    expect((await decide(h, id, 'cy')).status).toBe(200);
  });

  it('counts an admin in every group, but an admin may not decide their own run either', async () => {
    const h = await rulesHarness();
    const gate = { approval: { question: 'Pay?', timeoutSeconds: 300, approvers: ['finance'] } };
    const own = await gateOf(h, 'run-a', 'adm', gate);
    expect((await decide(h, own, 'adm')).body.error?.code).toBe('E_SELF_APPROVAL');
    const other = await gateOf(h, 'run-b', 'dan', gate);
    expect((await decide(h, other, 'adm')).status).toBe(200);
  });

  it('refuses a viewer and an operator with 403 E_FORBIDDEN naming the approver role', async () => {
    const h = await rulesHarness();
    const id = await gateOf(h, 'run-a', 'ana');
    for (const who of ['vic', 'dan'] as const) {
      const refused = await decide(h, id, who);
      expect(refused.status, who).toBe(403);
      expect(refused.body.error?.code).toBe('E_FORBIDDEN');
      expect(refused.body.error?.message).toMatch(/^this needs the approver role \(or admin\)/);
    }
    expect((await h.store.getApproval(id))?.status).toBe('pending');
  });

  it('applies to a held plan revision: the starter may not approve a revision of their run', async () => {
    const decided: (string | null | undefined)[] = [];
    const scripted = scriptedMailbox((_runId, command) => {
      if (command.kind === 'DecideApproval') decided.push(command.by);
      return { ok: true, value: {} };
    });
    const h = await rulesHarness({ mailbox: scripted.mailbox });
    await seedRun(h, 'run-a', planOf([echoStep('a')]), [stepRecord('run-a', 'a')], { startedBy: 'ana' });
    const revision = approvalRecord('run-a.revision.r2.1', {
      stepId: '~revision~2',
      generation: 2,
      kind: 'revision',
      taskToken: '-',
    });
    await h.store.putApproval(revision);
    expect((await decide(h, revision.approvalId, 'ana')).body.error?.code).toBe('E_SELF_APPROVAL');
    expect((await decide(h, revision.approvalId, 'bo')).status).toBe(200);
    // The refused decision never reached the run's decider; the allowed one did, as bo's.
    expect(decided).toEqual(['bo']);
  });

  it('leaves the one static token of a stack without a tokens file free to decide its own runs', async () => {
    const h = await harness();
    const started = await h.request('POST', '/runs', { body: { objective: 'ship it', directTarget: 'tool:echo' } });
    const { runId } = (await started.json()) as { runId: string };
    expect((await h.store.getRun(runId))?.startedBy).toBe('local-token');
    await h.store.putPlanRevision(
      runId,
      planOf([gateStep('gate', { approval: { question: 'Go?', timeoutSeconds: 60, approvers: ['finance'] } })]),
      'initial plan',
    );
    await h.store.updateRun(runId, ['planning'], { status: 'running', revision: 1 });
    await h.store.putSteps([stepRecord(runId, 'gate', { status: 'awaiting_approval' })]);
    await h.store.putApproval(approvalRecord('ap1', { runId, taskToken: await gateToken(h, runId, 'gate') }));
    const res = await h.request('POST', '/approvals/ap1', {
      headers: { authorization: `Bearer ${TOKEN}` },
      body: { decision: 'approve' },
    });
    expect(res.status).toBe(200);
  });
});

describe('GET /approvals lists only what the caller may decide', () => {
  async function inbox() {
    const h = await rulesHarness();
    await gateOf(h, 'run-a', 'ana');
    await gateOf(h, 'run-b', 'dan', { approval: { question: 'Pay?', timeoutSeconds: 300, approvers: ['finance'] } });
    await gateOf(h, 'run-c', 'dan');
    const list = async (who: Who, query = '') => {
      const res = await h.request('GET', `/approvals${query}`, { headers: as(who) });
      expect(res.status, who).toBe(200);
      return ((await res.json()) as { approvals: Json[] }).approvals.map((a) => a.approvalId);
    };
    return { h, list };
  }

  it('leaves out the runs the caller started and the gates of groups the caller is not in', async () => {
    const { list } = await inbox();
    expect(await list('ana')).toEqual(['ap-run-c']);
    expect(await list('bo')).toEqual(['ap-run-a', 'ap-run-b', 'ap-run-c']);
    expect(await list('cy')).toEqual(['ap-run-a', 'ap-run-c']);
    expect(await list('adm')).toEqual(['ap-run-a', 'ap-run-b', 'ap-run-c']);
    expect(await list('bo', '?runId=run-b')).toEqual(['ap-run-b']);
  });

  it('is empty for a caller who may decide nothing, who may still read an approval by its id', async () => {
    const { h, list } = await inbox();
    expect(await list('vic')).toEqual([]);
    expect(await list('dan')).toEqual([]);
    const read = await h.request('GET', '/approvals/ap-run-a', { headers: as('vic') });
    expect(read.status).toBe(200);
  });

  it('pages by what the store holds: a short page still says where the next one starts', async () => {
    const { list, h } = await inbox();
    const res = await h.request('GET', '/approvals?limit=2', { headers: as('ana') });
    const page = (await res.json()) as { approvals: Json[]; nextCursor?: string };
    expect(page.approvals).toEqual([]);
    expect(page.nextCursor).toBeDefined();
    expect(await list('ana', `?limit=2&cursor=${encodeURIComponent(page.nextCursor ?? '')}`)).toEqual(['ap-run-c']);
  });
});
