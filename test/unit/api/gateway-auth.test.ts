import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../functions/api.ts';
import { isPublicRoute } from '../../../shared/api/auth.ts';
import { gatewayEvent } from '../../support/gateway-event.ts';
import { echoStep, harness, planOf, seedRun, stepRecord } from './harness.ts';

/** An API Gateway HTTP API (payload 2.0) event; without `sub` the authorizer did not run (a public route). */
const httpApiEvent = (method: string, rawPath: string, options: { sub?: string; routeKey?: string } = {}) =>
  gatewayEvent(method, rawPath, {
    routeKey: options.routeKey ?? (options.sub === undefined ? 'GET /console/{proxy+}' : 'ANY /{proxy+}'),
    headers: { accept: 'application/json' },
    ...(options.sub === undefined ? {} : { claims: { sub: options.sub, 'cognito:groups': '[viewer]' } }),
  });

async function deployed() {
  const h = await harness({ auth: { kind: 'gateway' } });
  await seedRun(h, 'run-secret', planOf([echoStep('a')], 'the secret objective'), [stepRecord('run-secret', 'a')]);
  return createHandler(h.deps);
}

// Paths API Gateway sends to the function without claims (they start with /console/) or that a client may try.
const SMUGGLED = [
  '/runs',
  '/runs/run-secret',
  '/console/../runs',
  '/console/../runs/run-secret',
  '/console/%2e%2e/runs',
  '/console/%2E%2E/runs/run-secret',
  '/console/./../runs',
  '/console/js/../../runs',
  '/console%2F..%2Fruns',
  '/console/..%2Fruns',
  '/console/%252e%252e/runs',
  '//runs',
  '/runs/',
  '/RUNS',
  '/Console/../runs',
  '/console/..\\runs',
  '/approvals',
  '/console/../approvals',
  '/console/../conformance/ledger',
  '/console/../nope',
];

describe('gateway mode without verified claims', () => {
  it.each(SMUGGLED)('refuses GET %s with 401 E_UNAUTHORIZED and no data', async (rawPath) => {
    const handler = await deployed();
    const res = await handler(httpApiEvent('GET', rawPath));
    expect(res.statusCode, rawPath).toBe(401);
    expect(JSON.parse(res.body)).toEqual({ error: { code: 'E_UNAUTHORIZED', message: expect.any(String) } });
    expect(res.body).not.toContain('secret objective');
  });

  it('refuses data writes that came in through a public route', async () => {
    const handler = await deployed();
    for (const rawPath of ['/console/../runs/run-secret/cancel', '/webhooks/../runs/run-secret/cancel']) {
      const res = await handler(httpApiEvent('POST', rawPath, { routeKey: 'POST /webhooks/{source}' }));
      expect(res.statusCode, rawPath).toBe(401);
    }
  });

  it('still serves the public routes: the console files, the health check and the signed webhooks', async () => {
    const handler = await deployed();
    const page = await handler(httpApiEvent('GET', '/console/'));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<script type="module"');
    expect((await handler(httpApiEvent('GET', '/console'))).statusCode).toBe(308);
    expect((await handler(httpApiEvent('GET', '/console/js/app.js'))).statusCode).toBe(200);
    expect((await handler(httpApiEvent('GET', '/console/js/nope.js'))).statusCode).toBe(404);
    expect((await handler(httpApiEvent('GET', '/health'))).statusCode).toBe(200);
    // The webhook route answers for itself (no secret configured here: its own 401, 'invalid signature').
    const hook = await handler(httpApiEvent('POST', '/webhooks/github', { routeKey: 'POST /webhooks/{source}' }));
    expect(hook.statusCode).toBe(401);
    expect(JSON.parse(hook.body).error.message).toBe('invalid signature');
  });

  it('serves the data routes to a caller with verified claims', async () => {
    const handler = await deployed();
    const res = await handler(httpApiEvent('GET', '/runs/run-secret', { sub: 'alice' }));
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body).objective).toBe('the secret objective');
  });

  it('refuses claims without a subject', async () => {
    const h = await harness({ auth: { kind: 'gateway' } });
    const { createApp } = await import('../../../shared/api/app.ts');
    const app = createApp(h.deps);
    for (const claims of [{}, { sub: '' }, { sub: 42 }]) {
      const env = { requestContext: { authorizer: { jwt: { claims } } } };
      expect((await app.request('/runs', {}, env)).status, JSON.stringify(claims)).toBe(401);
    }
  });
});

describe('the public route list', () => {
  it('matches whole paths, by method', () => {
    const yes: [string, string][] = [
      ['GET', '/health'],
      ['HEAD', '/health'],
      ['GET', '/console'],
      ['GET', '/console/'],
      ['GET', '/console/index.html'],
      ['GET', '/console/config.json'],
      ['GET', '/console/js/app.js'],
      ['GET', '/console/vendor/elkjs-0.9.3/elk-worker.min.js'],
      ['POST', '/webhooks/github'],
    ];
    const no: [string, string][] = [
      ['POST', '/health'],
      ['GET', '/health/'],
      ['GET', '/healthz'],
      ['GET', '/Console/'],
      ['GET', '/consoles'],
      ['GET', '/console-data'],
      ['POST', '/console/'],
      ['GET', '/console/..'],
      ['GET', '/console/../runs'],
      ['GET', '/console/.hidden'],
      ['GET', '/console//x'],
      ['GET', '/console/%2e%2e/runs'],
      ['GET', '/console/..%2Fruns'],
      ['GET', '/console/a\\b'],
      ['GET', '/webhooks/github'],
      ['POST', '/webhooks/'],
      ['POST', '/webhooks/a/b'],
      ['POST', '/webhooks/github/'],
      ['GET', '/runs'],
      ['GET', '//health'],
    ];
    for (const [method, path] of yes) expect(isPublicRoute(method, path), `${method} ${path}`).toBe(true);
    for (const [method, path] of no) expect(isPublicRoute(method, path), `${method} ${path}`).toBe(false);
  });
});
