import { describe, expect, it } from 'vitest';
import { apiAuth, createHandler, defaultDeps } from '../../../functions/api.ts';
import { settingsFromEnv } from '../../../shared/config/settings.ts';
import { gatewayEvent } from '../../support/gateway-event.ts';
import {
  approvalRecord,
  echoStep,
  gateStep,
  gateToken,
  harness,
  planOf,
  seedRun,
  stepRecord,
  TOKEN,
} from '../api/harness.ts';

/** An API Gateway HTTP API (payload 2.0) event; with `sub`, carrying it (and `claims`) as verified JWT claims. */
const httpApiEvent = (
  method: string,
  path: string,
  options: { body?: unknown; sub?: string; claims?: Record<string, string>; headers?: Record<string, string> } = {},
) =>
  gatewayEvent(method, path, {
    ...(options.body === undefined ? {} : { body: options.body }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.sub ? { claims: { sub: options.sub, ...options.claims } } : {}),
  });

describe('api Lambda', () => {
  it('serves the app behind API Gateway and records the JWT subject as the approver', async () => {
    const h = await harness({ auth: { kind: 'gateway' } });
    await seedRun(h, 'run-a', planOf([echoStep('before'), gateStep('gate', { dependsOn: ['before'] })]), [
      stepRecord('run-a', 'gate', { status: 'awaiting_approval' }),
    ]);
    await h.store.putApproval(approvalRecord('ap1', { taskToken: await gateToken(h, 'run-a', 'gate') }));
    const handler = createHandler(h.deps);
    const claims = { 'cognito:groups': '[approver]' };
    const read = await handler(httpApiEvent('GET', '/runs/run-a', { sub: 'alice', claims }));
    expect(read.statusCode).toBe(200);
    expect(JSON.parse(read.body).status).toBe('paused');
    const decided = await handler(
      httpApiEvent('POST', '/approvals/ap1', { sub: 'alice', claims, body: { decision: 'approve' } }),
    );
    expect(decided.statusCode).toBe(200);
    expect(JSON.parse(decided.body).approval.decidedBy).toBe('alice');
    expect(h.executions.successes[0]?.output).toMatchObject({ by: 'alice' });
  });

  it('answers errors as JSON through the Lambda adapter', async () => {
    const h = await harness({ auth: { kind: 'token', token: TOKEN } });
    const handler = createHandler(h.deps);
    const denied = await handler(httpApiEvent('GET', '/runs/x'));
    expect(denied.statusCode).toBe(401);
    expect(JSON.parse(denied.body).error.code).toBe('E_UNAUTHORIZED');
    const missing = await handler(httpApiEvent('GET', '/runs/x', { headers: { authorization: `Bearer ${TOKEN}` } }));
    expect(missing.statusCode).toBe(404);
  });

  it('checks a static token only when CAIRN_API_TOKEN is set', () => {
    expect(apiAuth(settingsFromEnv({}))).toEqual({
      kind: 'gateway',
      claims: { groups: 'cognito:groups', scopes: 'scope', tenant: 'custom:tenant', scopePrefix: 'cairn/' },
    });
    expect(apiAuth(settingsFromEnv({ CAIRN_API_TOKEN: 's3cret' }))).toEqual({ kind: 'token', token: 's3cret' });
  });

  it('builds its dependencies from the Lambda environment without calling AWS', () => {
    const env = {
      CAIRN_TABLE_NAME: 'cairn',
      CAIRN_RUN_MACHINE_ARN: 'arn:aws:states:us-east-1:123456789012:stateMachine:run',
      CAIRN_STEP_MACHINE_ARN: 'arn:aws:states:us-east-1:123456789012:stateMachine:step',
      CAIRN_EVENT_BUS_NAME: 'cairn-bus',
      CAIRN_MAX_STEPS: '12',
    };
    const deps = defaultDeps(env);
    expect(deps.auth).toMatchObject({ kind: 'gateway' });
    expect(deps.limits.maxSteps).toBe(12);
    expect(deps.catalog.targets().length).toBeGreaterThan(0);
    expect(() => defaultDeps({ ...env, CAIRN_TABLE_NAME: '' })).toThrow(/CAIRN_TABLE_NAME/);
  });
});
