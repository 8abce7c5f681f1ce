/**
 * Tenants through the deployed handler: API Gateway (HTTP API, payload 2.0) events whose verified JWT claims name
 * the tenant (`custom:tenant` by default, or the claim the deployment names): each sees only its own runs.
 */
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../functions/api.ts';
import { gatewayEvent as gatewayEventOf } from '../../support/gateway-event.ts';
import { harness } from '../api/harness.ts';

/** An API Gateway HTTP API event carrying the JWT claims the authorizer verified. */
const gatewayEvent = (method: string, path: string, claims: Record<string, string>, body?: unknown) =>
  gatewayEventOf(method, path, { claims, ...(body === undefined ? {} : { body }) });

const errorOf = (body: string) => (JSON.parse(body) as { error: { code: string; message: string } }).error;

describe('the API Lambda with tenants from JWT claims', () => {
  it("starts a run in the caller's tenant, lists it only there, and answers 404 to another tenant", async () => {
    const h = await harness({ auth: { kind: 'gateway' } });
    const handler = createHandler(h.deps);
    const ana = { sub: 'ana', 'cognito:groups': '[operator]', 'custom:tenant': 'acme' };
    const bo = { sub: 'bo', 'cognito:groups': '[admin]', 'custom:tenant': 'globex' };
    const started = await handler(gatewayEvent('POST', '/runs', ana, { objective: 'hi', directTarget: 'tool:echo' }));
    expect(started.statusCode).toBe(202);
    const { runId } = JSON.parse(started.body) as { runId: string };
    expect((await h.store.getRun(runId))?.tenant).toBe('acme');
    expect((await handler(gatewayEvent('GET', `/runs/${runId}`, ana))).statusCode).toBe(200);
    const hidden = await handler(gatewayEvent('GET', `/runs/${runId}`, bo));
    expect(hidden.statusCode).toBe(404);
    expect(errorOf(hidden.body).code).toBe('E_NOT_FOUND');
    expect((await handler(gatewayEvent('POST', `/runs/${runId}/cancel`, bo, {}))).statusCode).toBe(404);
    const listed = (body: string) => (JSON.parse(body) as { runs: { runId: string }[] }).runs.map((r) => r.runId);
    expect(listed((await handler(gatewayEvent('GET', '/runs', ana))).body)).toEqual([runId]);
    expect(listed((await handler(gatewayEvent('GET', '/runs', bo))).body)).toEqual([]);
    // Without the claim: the default tenant, where acme's run is not.
    const plain = { sub: 'cy', 'cognito:groups': '[admin]' };
    expect((await handler(gatewayEvent('GET', `/runs/${runId}`, plain))).statusCode).toBe(404);
  });

  it('reads the tenant claim the deployment names, and refuses a tenant that cannot be one', async () => {
    const h = await harness({
      auth: {
        kind: 'gateway',
        claims: { groups: 'cognito:groups', scopes: 'scope', scopePrefix: 'cairn/', tenant: 'org' },
      },
    });
    const handler = createHandler(h.deps);
    const me = await handler(gatewayEvent('GET', '/me', { sub: 'dan', org: 'initech', 'custom:tenant': 'acme' }));
    expect(JSON.parse(me.body)).toMatchObject({ subject: 'dan', tenant: 'initech' });
    const bad = await handler(gatewayEvent('GET', '/me', { sub: 'eve', org: 'a#b' }));
    expect(bad.statusCode).toBe(401);
  });
});
