import { describe, expect, it } from 'vitest';
import {
  ApiCallError,
  ClientConfigError,
  connectionOf,
  createApiClient,
  describeCallError,
  type FetchLike,
} from '../../../shared/api/client.ts';

const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function recording(answer: (url: string, init: RequestInit) => Response | Promise<Response>) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetchLike: FetchLike = async (url, init) => {
    calls.push({ url, init });
    return answer(url, init);
  };
  return { calls, fetchLike };
}

describe('connectionOf', () => {
  it('prefers flags over the environment and defaults to the local stack', () => {
    expect(connectionOf({ token: 't' }, {})).toEqual({ baseUrl: 'http://127.0.0.1:3000', token: 't' });
    expect(connectionOf({}, { CAIRN_API_URL: 'https://x.example/api/', CAIRN_API_TOKEN: 'e' })).toEqual({
      baseUrl: 'https://x.example/api',
      token: 'e',
    });
    expect(
      connectionOf({ api: 'http://h:1', token: 'f' }, { CAIRN_API_URL: 'http://other', CAIRN_API_TOKEN: 'e' }),
    ).toEqual({
      baseUrl: 'http://h:1',
      token: 'f',
    });
  });

  it('refuses a missing token or a URL that is not http(s)', () => {
    expect(() => connectionOf({}, {})).toThrow(ClientConfigError);
    expect(() => connectionOf({ api: 'ftp://x', token: 't' }, {})).toThrow(/http/);
    expect(() => connectionOf({ api: 'not a url', token: 't' }, {})).toThrow(ClientConfigError);
  });
});

describe('createApiClient', () => {
  const connection = { baseUrl: 'http://api', token: 'tok' };

  it('sends the bearer token, JSON bodies and the idempotency key', async () => {
    const { calls, fetchLike } = recording(() => json(202, { runId: 'r1', status: 'planning' }));
    const client = createApiClient(connection, fetchLike);
    expect(await client.createRun({ objective: 'x' }, { idempotencyKey: 'k' })).toEqual({
      runId: 'r1',
      status: 'planning',
    });
    const { url, init } = calls[0] ?? { url: '', init: {} };
    expect(url).toBe('http://api/runs');
    expect(init.method).toBe('POST');
    expect(init.headers).toMatchObject({
      authorization: 'Bearer tok',
      'idempotency-key': 'k',
      'content-type': 'application/json',
    });
    expect(JSON.parse(String(init.body))).toEqual({ objective: 'x' });
  });

  it('encodes ids and queries', async () => {
    const { calls, fetchLike } = recording(() => json(200, { approvals: [] }));
    const client = createApiClient(connection, fetchLike);
    await client.listApprovals({ status: 'pending', runId: 'a b' });
    expect(calls[0]?.url).toBe('http://api/approvals?status=pending&runId=a+b');
    const other = recording(() => json(200, { runId: 'a/b' }));
    await createApiClient(connection, other.fetchLike).getRun('a/b');
    expect(other.calls[0]?.url).toBe('http://api/runs/a%2Fb');
  });

  it('follows the approvals queue page by page until no cursor is left', async () => {
    const pages: Record<string, unknown> = {
      '': { approvals: [{ approvalId: 'a' }, { approvalId: 'b' }], nextCursor: 'c1' },
      c1: { approvals: [{ approvalId: 'c' }], nextCursor: 'c2' },
      c2: { approvals: [] },
    };
    const { calls, fetchLike } = recording((url) => json(200, pages[new URL(url).searchParams.get('cursor') ?? '']));
    const approvals = await createApiClient(connection, fetchLike).listApprovals({ status: 'pending' });
    expect(approvals.map((a) => a.approvalId)).toEqual(['a', 'b', 'c']);
    expect(calls.map((c) => c.url)).toEqual([
      'http://api/approvals?status=pending',
      'http://api/approvals?status=pending&cursor=c1',
      'http://api/approvals?status=pending&cursor=c2',
    ]);
  });

  it('turns an error answer into an ApiCallError with the server code and the plan issues', async () => {
    const body = {
      error: { code: 'E_INVALID_PLAN', message: 'the plan is invalid (1 issue)' },
      valid: false,
      errors: [{ code: 'E_CYCLE', path: '/steps', message: 'a -> a' }],
    };
    const client = createApiClient(connection, recording(() => json(422, body)).fetchLike);
    const error = await client.createRun({ plan: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiCallError);
    expect(error).toMatchObject({ status: 422, code: 'E_INVALID_PLAN' });
    expect(describeCallError(error as ApiCallError)).toEqual([
      'E_INVALID_PLAN: the plan is invalid (1 issue)',
      '  E_CYCLE /steps a -> a',
    ]);
  });

  it('reports a non-JSON error answer and an unreachable server', async () => {
    const html = createApiClient(
      connection,
      recording(() => new Response('<h1>Bad Gateway</h1>', { status: 502 })).fetchLike,
    );
    expect(await html.getRun('r').catch((e: unknown) => e)).toMatchObject({
      status: 502,
      code: 'HTTP_502',
      retryable: true,
    });
    const down = createApiClient(connection, async () => Promise.reject(new TypeError('fetch failed')));
    expect(await down.getRun('r').catch((e: unknown) => e)).toMatchObject({ status: 0, code: 'E_UNREACHABLE' });
  });
});
