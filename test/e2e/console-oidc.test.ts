/**
 * Deployed sign-in in a real browser: behind a gateway authorizer with an OIDC provider configured, the console runs
 * the authorization-code flow with PKCE against the provider (a fake one on 127.0.0.1 that checks the S256
 * challenge) and sends the token it gets as `Authorization: Bearer` on every API call.
 */
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/api/app.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { startHttpServer, type TestHttpServer } from '../support/http-server.ts';
import { harness } from '../unit/api/harness.ts';
import { chromiumPath, eventually, launchChromium, NO_CHROMIUM_MESSAGE, openPage, screenshot } from './browser.ts';

let idp: TestHttpServer;
let server: ServerType;
let consoleUrl: string;
let browser: Browser;

describe.skipIf(!chromiumPath)('console sign-in through an OIDC provider', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    idp = await startHttpServer();
    const origin = new URL(idp.url).origin;
    const consoleSettings = settingsFromEnv({
      CAIRN_CONSOLE_OIDC_AUTHORIZE_URL: `${origin}/authorize`,
      CAIRN_CONSOLE_OIDC_TOKEN_URL: `${origin}/token`,
      CAIRN_CONSOLE_OIDC_CLIENT_ID: 'cairn-console',
    }).console;
    const app = createApp({ ...(await harness({ auth: { kind: 'gateway' } })).deps, console: consoleSettings });
    // Stands in for API Gateway's JWT authorizer: the provider's token becomes verified claims in the request context.
    const gateway = (request: Request) =>
      app.fetch(
        request,
        request.headers.get('authorization') === 'Bearer jwt-from-idp'
          ? { requestContext: { authorizer: { jwt: { claims: { sub: 'idp-user' } } } } }
          : {},
      );
    server = serve({ fetch: gateway, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', resolve));
    consoleUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/console/`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await idp?.close();
  });

  it('signs in with the code flow and PKCE and sends the provider token to the API', async () => {
    const flow: { challenge?: string | null; verified?: boolean } = {};
    idp.respondWith((request, response) => {
      const url = new URL(request.url, 'http://idp');
      if (url.pathname === '/authorize') {
        flow.challenge = url.searchParams.get('code_challenge');
        const back = new URL(url.searchParams.get('redirect_uri') ?? '');
        back.searchParams.set('code', 'code-1');
        back.searchParams.set('state', url.searchParams.get('state') ?? '');
        response.writeHead(302, { location: back.toString() });
        response.end();
        return;
      }
      const form = new URLSearchParams(request.body);
      const challenge = createHash('sha256')
        .update(form.get('code_verifier') ?? '')
        .digest('base64url');
      flow.verified = form.get('code') === 'code-1' && challenge === flow.challenge;
      response.writeHead(flow.verified ? 200 : 400, {
        'content-type': 'application/json',
        'access-control-allow-origin': new URL(consoleUrl).origin,
      });
      response.end(
        JSON.stringify(flow.verified ? { access_token: 'jwt-from-idp', expires_in: 3600 } : { error: 'invalid_grant' }),
      );
    });
    const { page, errors, context } = await openPage(browser);
    const bearer: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/runs') bearer.push(request.headers().authorization ?? '');
    });

    await page.goto(consoleUrl);
    await page.getByRole('button', { name: 'Sign in with your identity provider' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();

    expect(flow.verified).toBe(true);
    await eventually(() => bearer.length).toBeGreaterThan(0);
    expect(new Set(bearer)).toEqual(new Set(['Bearer jwt-from-idp']));
    expect(page.url()).not.toContain('code=');
    await screenshot(page, 'oidc-signed-in');
    expect(errors).toEqual([]);
    await context.close();
  });
});

if (!chromiumPath) {
  describe('console sign-in through an OIDC provider', () => {
    it.skip(`SKIPPED: ${NO_CHROMIUM_MESSAGE}`, () => {});
  });
}
