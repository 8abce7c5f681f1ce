/**
 * Roles and self-approval through the deployed handler: API Gateway (HTTP API, payload 2.0) events whose JWT claims
 * the authorizer verified. The gateway refuses a token without a route's scopes first (test/infra/api.test.ts); the
 * function checks the route's role again from the claims, and decides who may decide an approval.
 */
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../functions/api.ts';
import { gatewayEvent as gatewayEventOf } from '../../support/gateway-event.ts';
import { approvalRecord, echoStep, gateStep, gateToken, harness, planOf, seedRun, stepRecord } from '../api/harness.ts';

/** An API Gateway HTTP API event carrying the JWT claims the authorizer verified. */
const gatewayEvent = (method: string, path: string, claims: Record<string, string>, body?: unknown) =>
  gatewayEventOf(method, path, { claims, ...(body === undefined ? {} : { body }) });

const errorOf = (body: string) => (JSON.parse(body) as { error: { code: string; message: string } }).error;

async function deployed() {
  const h = await harness({ auth: { kind: 'gateway' } });
  return { h, handler: createHandler(h.deps) };
}

describe('the API Lambda with roles from JWT claims', () => {
  it("refuses a caller without the route's role with 403 E_FORBIDDEN, and serves one with it", async () => {
    const { h, handler } = await deployed();
    await seedRun(h, 'run-a', planOf([echoStep('a')]), [stepRecord('run-a', 'a', { status: 'running' })]);
    const viewer = { sub: 'vic', 'cognito:groups': '[viewer]' };
    const read = await handler(gatewayEvent('GET', '/runs/run-a', viewer));
    expect(read.statusCode).toBe(200);
    const refused = await handler(gatewayEvent('POST', '/runs/run-a/cancel', viewer, {}));
    expect(refused.statusCode).toBe(403);
    expect(errorOf(refused.body)).toMatchObject({
      code: 'E_FORBIDDEN',
      message: 'this needs the operator role (or admin); vic has viewer',
    });
    expect((await h.store.getRun('run-a'))?.status).toBe('running');
    const cancelled = await handler(
      gatewayEvent('POST', '/runs/run-a/cancel', { sub: 'otto', 'cognito:groups': '[operator]' }, {}),
    );
    expect(cancelled.statusCode).toBe(200);
    await h.deciding.mailbox.idle();
    expect((await h.store.getRun('run-a'))?.status).toBe('cancelled');
  });

  it('takes a role from a scope as API Gateway checked it, and records the starter of a run', async () => {
    const { h, handler } = await deployed();
    const started = await handler(
      gatewayEvent(
        'POST',
        '/runs',
        { sub: 'otto', scope: 'openid cairn/operator' },
        {
          objective: 'say hello',
          directTarget: 'tool:echo',
        },
      ),
    );
    expect(started.statusCode).toBe(202);
    const { runId } = JSON.parse(started.body) as { runId: string };
    expect((await h.store.getRun(runId))?.startedBy).toBe('otto');
    const noRole = await handler(gatewayEvent('POST', '/runs', { sub: 'x', scope: 'openid' }, { objective: 'hi' }));
    expect(noRole.statusCode).toBe(403);
  });

  it("refuses the run's starter a decision on its gate with 403 E_SELF_APPROVAL, and takes another approver's", async () => {
    const { h, handler } = await deployed();
    const alice = { sub: 'alice', 'cognito:groups': '[operator approver]' };
    const started = await handler(
      gatewayEvent('POST', '/runs', alice, { objective: 'ship it', directTarget: 'tool:echo' }),
    );
    const { runId } = JSON.parse(started.body) as { runId: string };
    // The run machine planned it and reached the gate.
    await h.store.putPlanRevision(runId, planOf([gateStep('gate')]), 'initial plan');
    await h.store.updateRun(runId, ['planning'], { status: 'running', revision: 1 });
    await h.store.putSteps([stepRecord(runId, 'gate', { status: 'awaiting_approval' })]);
    await h.store.putApproval(approvalRecord('ap1', { runId, taskToken: await gateToken(h, runId, 'gate') }));

    const own = await handler(gatewayEvent('POST', '/approvals/ap1', alice, { decision: 'approve' }));
    expect(own.statusCode).toBe(403);
    expect(errorOf(own.body).code).toBe('E_SELF_APPROVAL');
    const inbox = await handler(gatewayEvent('GET', '/approvals', alice));
    expect(JSON.parse(inbox.body).approvals).toEqual([]);

    const bob = { sub: 'bob', 'cognito:groups': '[approver]' };
    expect(JSON.parse((await handler(gatewayEvent('GET', '/approvals', bob))).body).approvals).toHaveLength(1);
    const decided = await handler(gatewayEvent('POST', '/approvals/ap1', bob, { decision: 'approve' }));
    expect(decided.statusCode).toBe(200);
    expect(JSON.parse(decided.body).approval.decidedBy).toBe('bob');
    expect(h.executions.successes[0]?.output).toMatchObject({ by: 'bob' });
  });

  it("holds a gate's approvers against the groups claim", async () => {
    const { h, handler } = await deployed();
    const gate = gateStep('gate', { approval: { question: 'Pay?', timeoutSeconds: 300, approvers: ['finance'] } });
    await seedRun(h, 'run-a', planOf([gate]), [stepRecord('run-a', 'gate', { status: 'awaiting_approval' })], {
      startedBy: 'otto',
    });
    await h.store.putApproval(approvalRecord('ap1', { taskToken: await gateToken(h, 'run-a', 'gate') }));
    const outside = await handler(
      gatewayEvent(
        'POST',
        '/approvals/ap1',
        { sub: 'cy', 'cognito:groups': '[approver legal]' },
        { decision: 'approve' },
      ),
    );
    expect(errorOf(outside.body)).toMatchObject({
      code: 'E_FORBIDDEN',
      message: expect.stringMatching(/^only finance/),
    });
    const inside = await handler(
      gatewayEvent(
        'POST',
        '/approvals/ap1',
        { sub: 'bo', 'cognito:groups': '[approver finance]' },
        { decision: 'approve' },
      ),
    );
    expect(inside.statusCode).toBe(200);
  });

  it('reads the role claims the deployment names', async () => {
    const h = await harness({
      auth: { kind: 'gateway', claims: { groups: 'groups', scopes: 'scp', scopePrefix: 'api/' } },
    });
    const handler = createHandler(h.deps);
    const me = await handler(gatewayEvent('GET', '/me', { sub: 'cy', groups: '[viewer]', scp: 'api/approver' }));
    expect(JSON.parse(me.body)).toEqual({
      subject: 'cy',
      roles: ['approver', 'viewer'],
      groups: ['viewer'],
      tenant: 'default',
    });
    // Cognito's default claim is not read when another is named.
    const other = await handler(gatewayEvent('GET', '/runs', { sub: 'dan', 'cognito:groups': '[admin]' }));
    expect(other.statusCode).toBe(403);
  });
});
