import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { authMiddleware, bearerToken, gatewaySubject, tokenMatches } from '../../../shared/api/auth.ts';
import { handleError } from '../../../shared/api/errors.ts';
import { harness, TOKEN } from './harness.ts';

describe('bearer token auth', () => {
  it('answers 401 JSON with WWW-Authenticate when the header is missing', async () => {
    const h = await harness();
    const res = await h.request('GET', '/runs', { headers: { authorization: '' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toEqual({ error: { code: 'E_UNAUTHORIZED', message: expect.any(String) } });
  });

  it('answers 401 for a wrong token, another scheme or a token prefix', async () => {
    const h = await harness();
    for (const authorization of [
      'Bearer wrong',
      `Basic ${TOKEN}`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Bearer ${TOKEN}x`,
    ]) {
      const res = await h.request('GET', '/runs/x', { headers: { authorization } });
      expect(res.status, authorization).toBe(401);
    }
  });

  it('checks the token before routing, so unknown routes do not leak', async () => {
    const h = await harness();
    const res = await h.request('GET', '/nope', { headers: { authorization: 'Bearer wrong' } });
    expect(res.status).toBe(401);
  });

  it('lets /health through without a token', async () => {
    const h = await harness();
    const res = await h.request('GET', '/health', { headers: { authorization: '' } });
    expect(res.status).toBe(200);
  });

  it('accepts the right token in any case of the scheme', async () => {
    const h = await harness();
    const res = await h.request('GET', '/runs', { headers: { authorization: `bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
  });

  it('refuses to be configured with an empty token', () => {
    expect(() => authMiddleware({ kind: 'token', token: '' })).toThrow(/empty/);
  });
});

describe('gateway auth', () => {
  const appWith = () => {
    const app = new Hono<{ Variables: { principal: string } }>();
    app.onError(handleError);
    app.use('*', authMiddleware({ kind: 'gateway' }));
    app.get('/who', (c) => c.json({ principal: c.get('principal') }));
    return app;
  };

  it('takes the principal from the JWT sub claim of the request context', async () => {
    const env = { requestContext: { authorizer: { jwt: { claims: { sub: 'user-42' }, scopes: null } } } };
    const res = await appWith().request('/who', {}, env);
    expect(await res.json()).toEqual({ principal: 'user-42' });
  });

  it('refuses a request without claims: the authorizer did not check it', async () => {
    const res = await appWith().request('/who', {}, {});
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_UNAUTHORIZED');
  });
});

describe('auth helpers', () => {
  it('parses only well-formed bearer headers', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('Bearer  abc ')).toBe('abc');
    expect(bearerToken('Bearer a b')).toBeUndefined();
    expect(bearerToken('Token abc')).toBeUndefined();
    expect(bearerToken(undefined)).toBeUndefined();
  });

  it('compares tokens of different lengths without throwing', () => {
    expect(tokenMatches('a', 'a')).toBe(true);
    expect(tokenMatches('a', 'ab')).toBe(false);
  });

  it('reads REST API (v1) claims too', () => {
    expect(gatewaySubject({ requestContext: { authorizer: { claims: { sub: 'u1' } } } })).toBe('u1');
    expect(gatewaySubject({ requestContext: {} })).toBeUndefined();
  });
});
