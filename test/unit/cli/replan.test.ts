import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { serve } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../../shared/api/app.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { main } from '../../../shared/cli/main.ts';
import { ConflictError } from '../../../shared/errors.ts';
import { type Harness, harness, runRecord, TOKEN } from '../api/harness.ts';

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function served(h: Harness): Promise<CliIo & { out: string[]; err: string[] }> {
  const app = createApp(h.deps);
  const port = await new Promise<number>((resolve) => {
    servers.push(
      serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(info.port)),
    );
  });
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: { CAIRN_API_URL: `http://127.0.0.1:${port}`, CAIRN_API_TOKEN: TOKEN },
    cwd: tmpdir(),
  };
}

describe('cairn replan', () => {
  it('asks the API for a replan with the reason and prints the revision', async () => {
    const requests: { runId: string; reason: string; request?: string }[] = [];
    const h = await harness({
      replanRun: async (request) => {
        requests.push(request);
        return { runId: request.runId, revision: 4 };
      },
    });
    await h.store.createRun(runRecord('run-1'));
    const io = await served(h);

    expect(await main(['replan', 'run-1', '--reason', 'search is down'], io)).toBe(0);
    expect(await main(['replan', 'run-1', '--reason', 'again', '--json'], io)).toBe(0);

    // Each call is a request of its own (its planning job): the run's decider tells them apart.
    expect(requests).toEqual([
      { runId: 'run-1', reason: 'search is down', request: expect.any(String), requestedBy: 'local-token' },
      { runId: 'run-1', reason: 'again', request: expect.any(String), requestedBy: 'local-token' },
    ]);
    expect(requests[0]?.request).not.toBe(requests[1]?.request);
    expect(io.out[0]).toBe('run run-1: replanned as revision 4 (cairn status run-1 --watch)\n');
    expect(JSON.parse(io.out[1] ?? '')).toEqual({ runId: 'run-1', revision: 4 });
  });

  it('sends a new objective and says when the revision waits for approval', async () => {
    const requests: { runId: string; reason: string; objective?: string }[] = [];
    const h = await harness({
      replanRun: async (request) => {
        requests.push(request);
        return { runId: request.runId, approvalId: 'run-1.revision.r2.1' };
      },
    });
    await h.store.createRun(runRecord('run-1', { status: 'complete' }));
    const io = await served(h);

    expect(await main(['replan', 'run-1', '--reason', 'ship it', '--objective', 'build and ship'], io)).toBe(0);
    expect(await main(['replan', 'run-1', '--reason', 'x', '--objective', ' '], io)).toBe(2);

    expect(requests).toEqual([
      {
        runId: 'run-1',
        reason: 'ship it',
        objective: 'build and ship',
        request: expect.any(String),
        requestedBy: 'local-token',
      },
    ]);
    expect(io.out[0]).toMatch(/waits for approval run-1\.revision\.r2\.1/);
  });

  it('exits 1 with the API message when the replan limit is reached', async () => {
    const h = await harness({
      replanRun: async () => {
        throw new ConflictError('run run-1 has reached its replan limit: 3 of 3 replans made', {
          context: { code: 'E_REPLAN_LIMIT' },
        });
      },
    });
    await h.store.createRun(runRecord('run-1'));
    const io = await served(h);

    expect(await main(['replan', 'run-1', '--reason', 'more'], io)).toBe(1);
    expect(io.err.join('')).toContain('E_REPLAN_LIMIT: run run-1 has reached its replan limit: 3 of 3 replans made');
  });

  it('exits 2 without a run id or a reason', async () => {
    const io = await served(await harness());

    expect(await main(['replan', '--reason', 'x'], io)).toBe(2);
    expect(await main(['replan', 'run-1'], io)).toBe(2);
    expect(await main(['replan', 'run-1', '--reason', ' '], io)).toBe(2);
    expect(io.err.join('')).toContain('--reason <text> is required');
  });
});
