import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { consoleAssetRoutes } from '../../../shared/api/console/assets.ts';
import { consoleConfig, consoleOptions, contentSecurityPolicy } from '../../../shared/api/console/config.ts';
import { settingsFromEnv } from '../../../shared/config/settings.ts';
import { type Harness, harness } from './harness.ts';

const anonymous = (h: Harness, path: string, headers: Record<string, string> = {}) =>
  h.request('GET', path, { headers: { authorization: '', ...headers } });

describe('the console page', () => {
  it('serves the page without a token, with a strict content security policy', async () => {
    const h = await harness();

    const res = await anonymous(h, '/console/');

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('<script type="module" src="js/app.js"></script>');
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('redirects /console to /console/ so relative module paths resolve', async () => {
    const h = await harness();

    const res = await anonymous(h, '/console');

    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/console/');
  });

  it('serves the modules with ETag revalidation and answers 304 when unchanged', async () => {
    const h = await harness();

    const first = await anonymous(h, '/console/js/app.js');
    const etag = first.headers.get('etag') ?? '';
    const second = await anonymous(h, '/console/js/app.js', { 'if-none-match': etag });

    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('text/javascript');
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect(etag).toMatch(/^".+"$/);
    expect(second.status).toBe(304);
  });

  it('serves the pinned elkjs files as immutable and gzipped when the browser accepts it', async () => {
    const h = await harness();
    const config = (await (await anonymous(h, '/console/config.json')).json()) as { elk: { worker: string } };

    const res = await anonymous(h, `/console/${config.elk.worker}`, { 'accept-encoding': 'gzip, br' });
    const body = Buffer.from(await res.arrayBuffer());

    expect(config.elk.worker).toMatch(/^vendor\/elkjs-\d+\.\d+\.\d+\/elk-worker\.min\.js$/);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-encoding')).toBe('gzip');
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(gunzipSync(body).length).toBeGreaterThan(body.length);
  });

  it('serves nothing outside its file list', async () => {
    const h = await harness();

    const answers = await Promise.all(
      ['/console/../package.json', '/console/%2e%2e/package.json', '/console/js/nope.js', '/console/vendor/x.js'].map(
        async (p) => {
          const res = await anonymous(h, p);
          return [res.status, (await res.text()).includes('"devDependencies"')];
        },
      ),
    );

    // Dot segments (also encoded) are resolved before routing: /package.json is an API path and needs a token.
    expect(answers).toEqual([
      [401, false],
      [401, false],
      [404, false],
      [404, false],
    ]);
  });

  it('tells the page to sign in with the static token when the API checks one', async () => {
    const h = await harness();

    const config = await (await anonymous(h, '/console/config.json')).json();

    expect(config).toMatchObject({ auth: { mode: 'token' }, apiBase: '' });
  });
});

describe('a deployment without the console files', () => {
  it('answers 503 with a JSON error instead of crashing', async () => {
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    const app = consoleAssetRoutes({
      auth: 'token',
      dir: join(tmpdir(), `cairn-no-console-${process.pid}-${Date.now()}`),
    });

    const res = await app.request('/console/');

    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: 'E_CONSOLE_UNAVAILABLE' } });
    expect(quiet).toHaveBeenCalledOnce();
    quiet.mockRestore();
  });
});

describe('console configuration', () => {
  const consoleOptionsFromEnv = (env: Record<string, string>, auth: Parameters<typeof consoleOptions>[1]) =>
    consoleOptions(settingsFromEnv(env).console, auth);
  const oidcEnv = {
    CAIRN_CONSOLE_OIDC_AUTHORIZE_URL: 'https://id.example.com/oauth2/authorize',
    CAIRN_CONSOLE_OIDC_TOKEN_URL: 'https://id.example.com/oauth2/token',
    CAIRN_CONSOLE_OIDC_CLIENT_ID: 'console',
  };

  it('configures the OIDC code flow behind a gateway authorizer and lets the page reach the token endpoint', () => {
    const options = consoleOptionsFromEnv({ ...oidcEnv, CAIRN_CONSOLE_OIDC_TOKEN: 'id' }, { kind: 'gateway' });
    const config = consoleConfig(options, 'vendor/elkjs-1.0.0/');

    expect(config.auth).toEqual({
      mode: 'jwt',
      oidc: {
        authorizeUrl: oidcEnv.CAIRN_CONSOLE_OIDC_AUTHORIZE_URL,
        tokenUrl: oidcEnv.CAIRN_CONSOLE_OIDC_TOKEN_URL,
        clientId: 'console',
        scope: 'openid',
        tokenField: 'id_token',
      },
    });
    expect(contentSecurityPolicy(config)).toContain("connect-src 'self' https://id.example.com");
  });

  it('asks for a pasted token with the one token and with a tokens file alike', () => {
    const tokens = [{ token: 'ana-token-0123456789', subject: 'ana', roles: ['viewer' as const] }];
    for (const auth of [{ kind: 'token', token: 't' } as const, { kind: 'tokens', tokens } as const]) {
      expect(consoleConfig(consoleOptionsFromEnv({}, auth), 'v/').auth, auth.kind).toEqual({ mode: 'token' });
    }
  });

  it('falls back to a pasted JWT when no provider is configured', () => {
    const config = consoleConfig(consoleOptionsFromEnv({}, { kind: 'gateway' }), 'v/');

    expect(config.auth).toEqual({ mode: 'jwt', oidc: null });
  });

  it('refuses a half-configured provider and a plain-http provider', () => {
    expect(() => consoleOptionsFromEnv({ CAIRN_CONSOLE_OIDC_CLIENT_ID: 'c' }, { kind: 'gateway' })).toThrow(/together/);
    expect(() =>
      consoleOptionsFromEnv(
        { ...oidcEnv, CAIRN_CONSOLE_OIDC_TOKEN_URL: 'http://id.example.com/token' },
        { kind: 'gateway' },
      ),
    ).toThrow(/https/);
  });
});
