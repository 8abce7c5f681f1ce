import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransport, retryAfterMs } from '../../../shared/api/client/transport.ts';
import { createApiClient, type RetryEvent } from '../../../shared/api/client.ts';
import { type RecordedRequest, startHttpServer, type TestHttpServer } from '../../support/http-server.ts';

let server: TestHttpServer;
beforeAll(async () => {
  server = await startHttpServer();
});
afterAll(async () => {
  await server.close();
});

const send = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

/** Answers each request with the next of `answers` (the last one again once they run out). */
function answering(answers: [number, unknown, Record<string, string>?][]) {
  let next = 0;
  server.requests.length = 0;
  server.respondWith((_request: RecordedRequest, response) => {
    const [status, body, headers] = answers[Math.min(next++, answers.length - 1)] ?? [500, {}];
    send(response, status, body, headers);
  });
}

const busy = { error: { code: 'E_UNAVAILABLE', message: 'busy' } };

function clientOf(options: { waits?: number[]; retries?: RetryEvent[] } = {}) {
  const base = new URL(server.url).origin;
  return createApiClient({ baseUrl: base, token: 'tok' }, fetch, {
    sleep: async (ms) => {
      options.waits?.push(ms);
    },
    random: () => 0.5,
    onRetry: (event) => options.retries?.push(event),
  });
}

describe('the API client against a server that is busy first', () => {
  it('sends POST /runs again after a 503, with the same fresh Idempotency-Key, and returns the 202', async () => {
    answering([
      [503, busy],
      [202, { runId: 'r1', status: 'planning' }],
    ]);
    const retries: RetryEvent[] = [];

    const created = await clientOf({ retries }).createRun({ objective: 'hello' });

    expect(created).toEqual({ runId: 'r1', status: 'planning' });
    expect(server.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(server.requests.map((r) => JSON.parse(r.body))).toEqual([{ objective: 'hello' }, { objective: 'hello' }]);
    expect(retries).toEqual([{ attempt: 1, delayMs: expect.any(Number), reason: 'HTTP 503' }]);
  });

  it('uses a new key for each logical call, and the caller’s own key when it gives one', async () => {
    answering([[202, { runId: 'r1', status: 'planning' }]]);
    const client = clientOf();

    await client.createRun({ objective: 'a' });
    await client.createRun({ objective: 'a' });
    await client.createRun({ objective: 'a' }, { idempotencyKey: 'mine' });

    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(3);
    expect(keys[2]).toBe('mine');
  });

  it('sends an Idempotency-Key with an invalidation and keeps it across the retry', async () => {
    answering([
      [503, busy],
      [202, { runId: 'r1', stepIds: ['a'], reopened: false }],
    ]);

    await clientOf().invalidate('r1', 'a', 'stale');

    const keys = server.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBeDefined();
    expect(keys[1]).toBe(keys[0]);
  });

  it('waits what Retry-After asks, else a jittered backoff that grows and stays bounded', async () => {
    answering([
      [503, busy, { 'retry-after': '2' }],
      [429, busy],
      [503, busy],
      [200, { runs: [] }],
    ]);
    const waits: number[] = [];

    await clientOf({ waits }).listRuns();

    expect(server.requests).toHaveLength(4);
    expect(waits).toEqual([2000, 250, 500]);
  });

  it('gives up after its attempts and reports the last answer', async () => {
    answering([[503, busy]]);

    const error = await clientOf()
      .getRun('r1')
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ status: 503, code: 'E_UNAVAILABLE' });
    expect(server.requests).toHaveLength(4);
  });

  it('does not send again an operation that could act twice (a replan) after a 503', async () => {
    answering([[503, busy]]);

    const error = await clientOf()
      .replan('r1', 'why')
      .catch((e: unknown) => e);

    expect(error).toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers['idempotency-key']).toBeUndefined();
  });

  it('retries a network error and reports an API that stays unreachable with status 0', async () => {
    const retries: RetryEvent[] = [];
    const client = createApiClient({ baseUrl: 'http://127.0.0.1:9', token: 't' }, fetch, {
      sleep: async () => {},
      onRetry: (event) => retries.push(event),
    });

    const error = await client.health().catch((e: unknown) => e);

    expect(error).toMatchObject({ status: 0, code: 'E_UNREACHABLE' });
    expect(retries).toHaveLength(3);
  });
});

describe('sendWebhook', () => {
  it('sends the body byte for byte as it was signed, with its signature headers', async () => {
    answering([[202, { accepted: true, resourceKeys: ['a'], deliveryId: 'd' }]]);
    const body = '{ "resourceKey":"a" }';
    const headers = { 'X-Cairn-Signature': 'sha256=00', 'X-Cairn-Timestamp': '1' };

    const answer = await clientOf().sendWebhook('github', body, headers);

    expect(answer).toEqual({ accepted: true, resourceKeys: ['a'], deliveryId: 'd' });
    expect(server.requests[0]).toMatchObject({ method: 'POST', url: '/webhooks/github', body });
    expect(server.requests[0]?.headers).toMatchObject({ 'x-cairn-signature': 'sha256=00', 'x-cairn-timestamp': '1' });
  });
});

describe('retryAfterMs', () => {
  it('reads seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Tue, 01 Jan 2030 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});

describe('createTransport', () => {
  it('does not wait a Retry-After longer than it allows: the answer is returned', async () => {
    const fetchLike = async () => new Response('{}', { status: 503, headers: { 'retry-after': '3600' } });
    const transport = createTransport(fetchLike, { sleep: async () => {} });

    const response = await transport.send(new Request('http://api/x'), 'safe');

    expect(response.status).toBe(503);
  });
});
