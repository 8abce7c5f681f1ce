import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type HttpCapabilityOptions, httpCapability, MAX_REDIRECTS } from '../../../shared/adapters/http-capability.ts';
import { aCall, caught, codeOf } from '../../support/capability-call.ts';
import { json, type Responder, startHttpServer, type TestHttpServer } from '../../support/http-server.ts';

/** What an endless answer's server saw: the bytes it wrote, and whether the client closed the stream on it. */
interface Stream {
  bytes: number;
  closed: boolean;
}

/** Answers `status` with a body that never ends, written as fast as the client reads it. */
const endless =
  (status: number, stream: Stream): Responder =>
  (_request, response: ServerResponse) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      let more = true;
      while (more && !response.destroyed) {
        more = response.write(chunk);
        stream.bytes += chunk.length;
      }
    };
    response.on('drain', pump);
    response.on('close', () => {
      stream.closed = true;
    });
    response.write('[');
    pump();
  };

const redirect =
  (status: number, location: string): Responder =>
  (_request, response) => {
    response.writeHead(status, { location });
    response.end();
  };

describe('httpCapability as a careful client', () => {
  let server: TestHttpServer;
  let other: TestHttpServer;
  const binding = (options: Partial<HttpCapabilityOptions> = {}) =>
    httpCapability({
      url: server.url,
      timeoutMs: 5000,
      headers: { 'x-api-key': 'k-secret' },
      internal: true,
      ...options,
    });

  beforeAll(async () => {
    [server, other] = await Promise.all([startHttpServer(), startHttpServer()]);
  });
  afterAll(async () => {
    await Promise.all([server.close(), other.close()]);
  });
  beforeEach(() => {
    server.requests.length = 0;
    other.requests.length = 0;
    other.respondWith(json(200, { value: 'from the other origin' }));
  });

  describe('redirects', () => {
    it('does not follow a 307 to another origin, so its headers never reach it', async () => {
      const secret = new URL('/internal/secret?token=t', other.url);
      server.respondWith(redirect(307, secret.href));

      const error = await caught(binding().invoke(aCall()));

      expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
      expect(codeOf(error)).toBe('E_REDIRECT_REFUSED');
      expect(String(error.message)).toContain(`HTTP 307 redirecting to ${secret.origin};`);
      expect(String(error.message)).not.toContain('/internal/secret');
      expect(other.requests).toEqual([]);
    });

    it('refuses a redirect to another origin even when the binding allows same-origin ones', async () => {
      server.respondWith(redirect(307, other.url));

      const error = await caught(binding({ redirects: 'same-origin' }).invoke(aCall()));

      expect(codeOf(error)).toBe('E_REDIRECT_REFUSED');
      expect(String(error.message)).toContain('another origin');
      expect(other.requests).toEqual([]);
    });

    it.each([undefined, 'same-origin'] as const)(
      'does not turn a POST answered 302 into a GET (redirects: %s)',
      async (redirects) => {
        server.respondWith((request, response) => {
          if (request.url === '/capability') return redirect(302, '/elsewhere')(request, response);
          return json(200, { value: 'got by a GET' })(request, response);
        });

        const error = await caught(binding(redirects === undefined ? {} : { redirects }).invoke(aCall()));

        expect(codeOf(error)).toBe('E_REDIRECT_REFUSED');
        expect(String(error.message)).toContain('HTTP 302');
        expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /capability']);
      },
    );

    it('follows a same-origin 307 with the same method, body and headers only when the binding allows it', async () => {
      server.respondWith((request, response) => {
        if (request.url === '/capability') return redirect(307, '/v2/capability')(request, response);
        return json(200, { value: 'moved' })(request, response);
      });

      const refused = await caught(binding().invoke(aCall()));
      expect(codeOf(refused)).toBe('E_REDIRECT_REFUSED');
      expect(server.requests).toHaveLength(1);
      server.requests.length = 0;

      const result = await binding({ redirects: 'same-origin' }).invoke(aCall());

      expect(result.output).toEqual({ value: 'moved' });
      const [first, second] = server.requests;
      expect(second).toMatchObject({ method: 'POST', url: '/v2/capability', body: first?.body });
      expect(second?.headers['x-api-key']).toBe('k-secret');
      expect(second?.headers['idempotency-key']).toBe('run-1#step-1#1');
    });

    it(`gives up after ${MAX_REDIRECTS} same-origin redirects`, async () => {
      server.respondWith(redirect(308, '/capability'));

      const error = await caught(binding({ redirects: 'same-origin' }).invoke(aCall()));

      expect(codeOf(error)).toBe('E_REDIRECT_REFUSED');
      expect(String(error.message)).toContain(`more than ${MAX_REDIRECTS} redirects`);
      expect(server.requests).toHaveLength(MAX_REDIRECTS + 1);
    });
  });

  describe('addresses', () => {
    it('refuses an endpoint on 127.0.0.1 unless the binding is marked internal, and calls it when it is', async () => {
      server.respondWith(json(200, { value: 'internal' }));

      const error = await caught(binding({ internal: false }).invoke(aCall()));
      expect(server.requests).toEqual([]);
      const result = await binding({ internal: true }).invoke(aCall());

      expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
      expect(codeOf(error)).toBe('E_ADDRESS_REFUSED');
      expect(String(error.message)).toContain('127.0.0.1 is a loopback address');
      expect(result.output).toEqual({ value: 'internal' });
      expect(server.requests).toHaveLength(1);
    });

    it('refuses a host name that resolves to a loopback address, at the connection', async () => {
      const byName = new URL(server.url);
      byName.hostname = 'localhost';

      const error = await caught(binding({ url: byName.href, internal: false }).invoke(aCall()));

      expect(codeOf(error)).toBe('E_ADDRESS_REFUSED');
      expect(String(error.message)).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
      expect(server.requests).toEqual([]);
    });

    it('refuses the cloud metadata address before connecting', async () => {
      const error = await caught(
        binding({ url: 'http://169.254.169.254/latest/meta-data/', internal: false }).invoke(aCall()),
      );

      expect(codeOf(error)).toBe('E_ADDRESS_REFUSED');
      expect(String(error.message)).toContain('169.254.169.254 is a link-local address');
    });
  });

  describe('answer size', () => {
    it('stops reading an endless answer at the limit and fails E_OUTPUT_TOO_LARGE, closing the stream', async () => {
      const stream: Stream = { bytes: 0, closed: false };
      server.respondWith(endless(200, stream));

      const error = await caught(binding({ maxAnswerBytes: 100_000 }).invoke(aCall()));

      expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
      expect(codeOf(error)).toBe('E_OUTPUT_TOO_LARGE');
      expect(String(error.message)).toContain('more than 100000 bytes');
      await vi.waitFor(() => expect(stream.closed).toBe(true));
      // What sits in the sockets' buffers when the client stops, not the endless rest.
      expect(stream.bytes).toBeLessThan(32 * 1024 * 1024);
    });

    it('fails at once on a content-length over the limit, without waiting for the body', async () => {
      server.respondWith((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '400000000' });
        response.write('[');
      });

      const error = await caught(binding({ maxAnswerBytes: 100_000 }).invoke(aCall()));

      expect(codeOf(error)).toBe('E_OUTPUT_TOO_LARGE');
      expect(String(error.message)).toContain('declared an answer of 400000000 bytes');
    });

    it('reads an answer of exactly the limit and refuses one a byte longer', async () => {
      const body = JSON.stringify({ value: 'x'.repeat(990) });
      server.respondWith(json(200, body));
      const limit = Buffer.byteLength(body);

      const result = await binding({ maxAnswerBytes: limit }).invoke(aCall());
      const error = await caught(binding({ maxAnswerBytes: limit - 1 }).invoke(aCall()));

      expect(result.output).toEqual({ value: 'x'.repeat(990) });
      expect(codeOf(error)).toBe('E_OUTPUT_TOO_LARGE');
    });

    it('reads only an excerpt of a failure’s endless body', async () => {
      const stream: Stream = { bytes: 0, closed: false };
      server.respondWith(endless(500, stream));

      const error = await caught(binding().invoke(aCall()));

      expect(error).toMatchObject({ retryable: true });
      expect(codeOf(error)).toBe('E_CAPABILITY_UNAVAILABLE');
      expect(String(error.message)).toContain('HTTP 500');
      await vi.waitFor(() => expect(stream.closed).toBe(true));
    });
  });
});
