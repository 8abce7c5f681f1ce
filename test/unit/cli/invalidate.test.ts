import { describe, expect, it } from 'vitest';
import type { FetchLike } from '../../../shared/api/client.ts';
import { createInvalidateCommand } from '../../../shared/cli/commands/invalidate.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { main } from '../../../shared/cli/main.ts';

function io(): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: { CAIRN_API_URL: 'http://api.test', CAIRN_API_TOKEN: 'tok' },
    cwd: '/',
  };
}

/** A fetch that records the request and answers with `status` and `body`. */
function answering(status: number, body: unknown) {
  const calls: { url: string; method: string; body: unknown }[] = [];
  const fetch: FetchLike = async (url, init) => {
    calls.push({
      url: String(url),
      method: String(init?.method),
      body: init?.body === undefined ? undefined : JSON.parse(String(init.body)),
    });
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, calls };
}

describe('cairn invalidate', () => {
  it('posts the reason to the step and says which steps start a new generation', async () => {
    const api = answering(202, { runId: 'r1', stepIds: ['w', 'd'], reopened: true });
    const captured = io();

    const code = await createInvalidateCommand({ fetch: api.fetch })(['r1', 'w', '--reason', 'repo moved'], captured);

    expect(code).toBe(0);
    expect(api.calls).toEqual([
      { url: 'http://api.test/runs/r1/steps/w/invalidate', method: 'POST', body: { reason: 'repo moved' } },
    ]);
    expect(captured.out.join('')).toContain('w, d start a new generation; the run reopened');
  });

  it('prints the answer as JSON with --json and sends an empty body without --reason', async () => {
    const api = answering(202, { runId: 'r1', stepIds: ['w'], reopened: false });
    const captured = io();

    expect(await createInvalidateCommand({ fetch: api.fetch })(['r1', 'w', '--json'], captured)).toBe(0);

    expect(api.calls[0]?.body).toEqual({});
    expect(JSON.parse(captured.out.join(''))).toEqual({ runId: 'r1', stepIds: ['w'], reopened: false });
  });

  it('exits 1 with the API error for an unknown step, 2 for bad usage', async () => {
    const missing = answering(404, { error: { code: 'E_NOT_FOUND', message: 'run r1 has no step x' } });
    const captured = io();
    expect(await createInvalidateCommand({ fetch: missing.fetch })(['r1', 'x'], captured)).toBe(1);
    expect(captured.err.join('')).toContain('E_NOT_FOUND');

    const unused = answering(202, {});
    expect(await createInvalidateCommand({ fetch: unused.fetch })(['r1'], io())).toBe(2);
    expect(await createInvalidateCommand({ fetch: unused.fetch })(['r1', 'w', 'extra'], io())).toBe(2);
    expect(await createInvalidateCommand({ fetch: unused.fetch })(['r1', 'w', '--reason', ' '], io())).toBe(2);
    expect(unused.calls).toEqual([]);
  });

  it('is a registered command', async () => {
    const captured = io();
    expect(await main(['invalidate', '--help'], captured)).toBe(0);
    expect(captured.out.join('')).toContain('usage: cairn invalidate <runId> <stepId>');
  });
});
