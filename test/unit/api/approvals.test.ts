import { describe, expect, it } from 'vitest';
import type { RunCommandInput } from '../../../shared/engine/run/commands.ts';
import { type Reply, refuse } from '../../../shared/engine/run/decision.ts';
import {
  approvalRecord,
  echoStep,
  gateStep,
  gateToken,
  harness,
  planOf,
  scriptedMailbox,
  seedRun,
  stepRecord,
} from './harness.ts';

type Json = Record<string, unknown>;

async function gateHarness(overrides: Parameters<typeof harness>[0] = {}) {
  const h = await harness(overrides);
  const plan = planOf([echoStep('before'), gateStep('gate', { dependsOn: ['before'] })]);
  await seedRun(h, 'run-a', plan, [
    stepRecord('run-a', 'before', { status: 'succeeded', output: { value: 'x' } }),
    stepRecord('run-a', 'gate', { status: 'awaiting_approval' }),
  ]);
  // The gate's step execution waits on this token; the approval carries it, as the step machine's task writes it.
  const token = await gateToken(h, 'run-a', 'gate');
  await h.store.putApproval(approvalRecord('ap1', { taskToken: token }));
  return Object.assign(h, { token });
}

describe('GET /approvals', () => {
  it('lists approvals by status without their task tokens', async () => {
    const h = await gateHarness();
    await h.store.putApproval(approvalRecord('ap2', { status: 'approved' }));
    const res = await h.request('GET', '/approvals?status=pending');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { approvals: Json[] };
    expect(body.approvals.map((a) => a.approvalId)).toEqual(['ap1']);
    expect(body.approvals[0]).toMatchObject({
      runId: 'run-a',
      stepId: 'gate',
      generation: 1,
      kind: 'approval',
      status: 'pending',
      question: 'May it go on?',
      input: {},
      upstreamOutputs: { before: { value: 'x' } },
      deadline: '2030-01-01T00:05:00.000Z',
      createdAt: '2030-01-01T00:00:00.000Z',
    });
    expect(JSON.stringify(body)).not.toContain(h.token);
    const all = (await (await h.request('GET', '/approvals')).json()) as { approvals: Json[] };
    expect(all.approvals).toHaveLength(2);
  });

  it('answers 400 for an unknown status', async () => {
    const h = await gateHarness();
    expect((await h.request('GET', '/approvals?status=maybe')).status).toBe(400);
  });

  it('reads one approval, or 404', async () => {
    const h = await gateHarness();
    const res = await h.request('GET', '/approvals/ap1');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { approval: Json };
    expect(body.approval.approvalId).toBe('ap1');
    expect(body.approval.taskToken).toBeUndefined();
    expect((await h.request('GET', '/approvals/nope')).status).toBe(404);
  });
});

describe('POST /approvals/{id}', () => {
  it('records an approval and answers the task token with the decision', async () => {
    const h = await gateHarness();
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'approve', comment: 'fine' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { approval: Json };
    expect(body.approval).toMatchObject({
      status: 'approved',
      decidedBy: 'local-token',
      comment: 'fine',
      decidedAt: '2030-01-01T00:00:00.000Z',
    });
    expect(h.executions.successes).toEqual([
      { token: h.token, output: { decision: 'approve', comment: 'fine', by: 'local-token' } },
    ]);
  });

  it('lets exactly one of two concurrent decisions win; the other gets 409', async () => {
    const h = await gateHarness();
    const [a, b] = await Promise.all([
      h.request('POST', '/approvals/ap1', { body: { decision: 'approve' } }),
      h.request('POST', '/approvals/ap1', { body: { decision: 'reject' } }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const loser = (await (a.status === 409 ? a : b).json()) as { error: { code: string } };
    expect(loser.error.code).toBe('E_ALREADY_DECIDED');
    expect(h.executions.successes).toHaveLength(1);
  });

  it('answers 409 to another decision after the first', async () => {
    const h = await gateHarness();
    await h.request('POST', '/approvals/ap1', { body: { decision: 'approve' } });
    const other = await h.request('POST', '/approvals/ap1', { body: { decision: 'reject' } });
    expect(other.status).toBe(409);
    expect(h.executions.successes).toHaveLength(1);
  });

  it("answers its maker's repeat of the same decision with 200, the step's token sent again", async () => {
    const h = await gateHarness();
    await h.request('POST', '/approvals/ap1', { body: { decision: 'approve', comment: 'ok' } });
    const again = await h.request('POST', '/approvals/ap1', { body: { decision: 'approve', comment: 'ok' } });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { approval: { status: string } }).approval.status).toBe('approved');
    // Here the first answer reached the step, so the token refuses the second (closed): still the maker's 200.
    expect(h.executions.successes).toHaveLength(1);
  });

  it('answers 410 past the deadline, marks the approval expired and answers no token', async () => {
    const h = await gateHarness();
    h.now = new Date('2030-01-01T00:05:00.001Z');
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'approve' } });
    expect(res.status).toBe(410);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_APPROVAL_EXPIRED');
    expect((await h.store.getApproval('ap1'))?.status).toBe('expired');
    expect(h.executions.successes).toEqual([]);
    const again = await h.request('POST', '/approvals/ap1', { body: { decision: 'approve' } });
    expect(again.status).toBe(410);
  });

  it('accepts a decision at the deadline itself', async () => {
    const h = await gateHarness();
    h.now = new Date('2030-01-01T00:05:00.000Z');
    expect((await h.request('POST', '/approvals/ap1', { body: { decision: 'approve' } })).status).toBe(200);
  });

  it('edits with an output that matches the step outputSchema', async () => {
    const h = await gateHarness();
    const output = { approved: true, note: 'changed' };
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'edit', output } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { approval: Json }).approval).toMatchObject({ status: 'edited', output });
    expect(h.executions.successes[0]?.output).toEqual({ decision: 'edit', output, by: 'local-token' });
  });

  it('refuses an edit whose output breaks the outputSchema with 422 and keeps the approval pending', async () => {
    const h = await gateHarness();
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'edit', output: { approved: 'yes' } } });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: { code: string; details: string[] } };
    expect(body.error.code).toBe('E_INVALID_OUTPUT');
    expect(body.error.details.length).toBeGreaterThan(0);
    expect((await h.store.getApproval('ap1'))?.status).toBe('pending');
    expect(h.executions.successes).toEqual([]);
  });

  it('refuses with 413 an edit too large for the waiting step, before the decision is recorded', async () => {
    const h = await gateHarness();
    const output = { approved: true, note: 'n'.repeat(300 * 1024) };
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'edit', output } });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_TOO_LARGE');
    expect((await h.store.getApproval('ap1'))?.status).toBe('pending');
    expect(h.executions.successes).toEqual([]);
  });

  it('refuses an edit without an output with 422', async () => {
    const h = await gateHarness();
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'edit' } });
    expect(res.status).toBe(422);
    expect((await h.store.getApproval('ap1'))?.status).toBe('pending');
  });

  it('validates a review against the reviewed step target', async () => {
    const h = await harness();
    // The reviewed step waits for the decision, as a low-confidence result's review holds it.
    await seedRun(h, 'run-a', planOf([echoStep('before')]), [
      stepRecord('run-a', 'before', { status: 'awaiting_approval' }),
    ]);
    const token = await gateToken(h, 'run-a', 'before');
    await h.store.putApproval(
      approvalRecord('rv', { stepId: 'before', kind: 'review', heldOutput: { value: 'x' }, taskToken: token }),
    );
    const bad = await h.request('POST', '/approvals/rv', { body: { decision: 'edit', output: { approved: true } } });
    expect(bad.status).toBe(422);
    const good = await h.request('POST', '/approvals/rv', { body: { decision: 'edit', output: { value: 'fixed' } } });
    expect(good.status).toBe(200);
  });

  it('records a rejection without an output', async () => {
    const h = await gateHarness();
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'reject', output: { approved: true } } });
    expect(res.status).toBe(200);
    expect(await h.store.getApproval('ap1')).toMatchObject({ status: 'rejected' });
    expect((await h.store.getApproval('ap1'))?.output).toBeUndefined();
    expect(h.executions.successes[0]?.output).toEqual({ decision: 'reject', by: 'local-token' });
  });

  it("honours a decision whose wait timed out before the run's decider heard of it (never 410, then honoured)", async () => {
    const h = await gateHarness();
    await h.executions.timeOut(h.token);
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'approve' } });
    expect(res.status).toBe(200);
    expect(await h.store.getApproval('ap1')).toMatchObject({ status: 'approved' });
  });

  it('closes unannounced, with 410, an approval whose step a cancel closed before the gate held it', async () => {
    // The chaos suite's race: the cancel closed the step (no approval existed yet), then the gate wrote its approval.
    const h = await harness();
    const plan = planOf([echoStep('before'), gateStep('gate', { dependsOn: ['before'] })]);
    await seedRun(
      h,
      'run-a',
      plan,
      [
        stepRecord('run-a', 'before', { status: 'succeeded', output: { value: 'x' } }),
        stepRecord('run-a', 'gate', { status: 'cancelled' }),
      ],
      { status: 'cancelled' },
    );
    const token = await gateToken(h, 'run-a', 'gate');
    await h.store.putApproval(approvalRecord('ap1', { taskToken: token }));
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'approve' } });
    expect(res.status).toBe(410);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_APPROVAL_EXPIRED');
    expect((await h.store.getApproval('ap1'))?.status).toBe('expired');
    expect(h.executions.successes).toEqual([]);
  });

  it('retries a transient failure to answer the token', async () => {
    const h = await gateHarness();
    const send = h.executions.sendTaskSuccess.bind(h.executions);
    let calls = 0;
    h.executions.sendTaskSuccess = async (token, output) => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('throttled'), { name: 'ThrottlingException' });
      return send(token, output);
    };
    const res = await h.request('POST', '/approvals/ap1', { body: { decision: 'approve' } });
    expect(res.status).toBe(200);
    // The batch is tried again; its decision, once committed, stands, and the wait is answered again.
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(h.executions.successes.length).toBeGreaterThanOrEqual(1);
  });

  it('answers 400 for a bad decision and 404 for an unknown approval', async () => {
    const h = await gateHarness();
    expect((await h.request('POST', '/approvals/ap1', { body: { decision: 'maybe' } })).status).toBe(400);
    expect((await h.request('POST', '/approvals/nope', { body: { decision: 'approve' } })).status).toBe(404);
  });

  it('records the JWT subject as the approver when deployed', async () => {
    const h = await gateHarness({ auth: { kind: 'gateway' } });
    const { createApp } = await import('../../../shared/api/app.ts');
    const app = createApp(h.deps);
    const env = {
      requestContext: { authorizer: { jwt: { claims: { sub: 'alice', 'cognito:groups': '[approver]' } } } },
    };
    const res = await app.request(
      '/approvals/ap1',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      },
      env,
    );
    expect(res.status).toBe(200);
    expect(((await res.json()) as { approval: Json }).approval.decidedBy).toBe('alice');
  });
});

describe('GET /conformance/ledger', () => {
  it('exists only with a ledger', async () => {
    const without = await harness();
    expect((await without.request('GET', '/conformance/ledger')).status).toBe(404);
    const entries = [{ entryId: 'e1', entry: 'x' }];
    const withLedger = await harness({ ledger: { entries: () => entries } });
    const res = await withLedger.request('GET', '/conformance/ledger');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ entries });
  });
});

describe('POST /approvals/{id} on a held plan revision', () => {
  const revisionApproval = approvalRecord('run-a.revision.r2.1', {
    stepId: '~revision~2',
    generation: 2,
    kind: 'revision',
    taskToken: '-',
    question: 'Plan revision 2 adds a mutating target, tool:conformance.ledger. Let it run?',
  });
  async function revisionHarness(answer: (command: RunCommandInput) => Reply = () => ({ ok: true })) {
    const script = scriptedMailbox((_runId, command) => answer(command));
    const h = await harness({ mailbox: script.mailbox });
    await h.store.putApproval(revisionApproval);
    return {
      h,
      decisions: () => script.asked.map((a) => a.command as Extract<RunCommandInput, { kind: 'DecideApproval' }>),
    };
  }

  it("hands a decision to the run's decider with who decided, never a task token", async () => {
    const { h, decisions } = await revisionHarness();

    const response = await h.request('POST', `/approvals/${revisionApproval.approvalId}`, {
      body: { decision: 'reject', comment: 'not now' },
    });

    expect(response.status).toBe(200);
    expect(decisions()).toEqual([
      expect.objectContaining({ kind: 'DecideApproval', approvalId: revisionApproval.approvalId, decision: 'reject' }),
    ]);
    expect(decisions()[0]?.by).toEqual(expect.any(String));
    expect(h.executions.successes).toEqual([]);
  });

  it("passes the decider's refusals on: an edit (422), a stale revision with its code (409)", async () => {
    const { h } = await revisionHarness((command) =>
      command.kind === 'DecideApproval' && command.decision === 'edit'
        ? refuse(422, 'E_BAD_REQUEST', 'a revision is approved or rejected, not edited')
        : refuse(409, 'E_REVISION_STALE', 'the run moved on'),
    );

    const edit = await h.request('POST', `/approvals/${revisionApproval.approvalId}`, {
      body: { decision: 'edit', output: {} },
    });
    const approve = await h.request('POST', `/approvals/${revisionApproval.approvalId}`, {
      body: { decision: 'approve' },
    });

    expect(edit.status).toBe(422);
    expect(approve.status).toBe(409);
    expect(((await approve.json()) as Json).error).toMatchObject({ code: 'E_REVISION_STALE' });
  });
});
