import { mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../../shared/api/app.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { main } from '../../../shared/cli/main.ts';
import type { StepRecord } from '../../../shared/ports/store.ts';
import {
  approvalRecord,
  echoStep,
  gateStep,
  gateToken,
  type Harness,
  harness,
  planOf,
  seedRun,
  stepRecord,
  TOKEN,
} from '../api/harness.ts';

interface Captured extends CliIo {
  readonly out: string[];
  readonly err: string[];
}

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** Serves the API of a harness on a free local port and returns a CLI io pointed at it. */
async function served(h: Harness, env: Record<string, string> = {}): Promise<Captured> {
  const app = createApp(h.deps);
  const port = await new Promise<number>((resolve) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) =>
      resolve(info.port),
    );
    servers.push(server);
  });
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: { CAIRN_API_URL: `http://127.0.0.1:${port}`, CAIRN_API_TOKEN: TOKEN, ...env },
    cwd: tmpdir(),
  };
}

const text = (lines: string[]): string => lines.join('');

/** Moves the steps of a run through statuses, one change per tick, like the engine would. */
let versions = 0;

/** What the relay records of a decision: its events in the run's audit log, under the next version. */
async function announce(h: Harness, runId: string, type: string, detail: Record<string, unknown> = {}) {
  versions += 1;
  const events = [{ type: type as 'StepStarted', detail: { runId, ...detail } }];
  await h.store.recordEvents([{ id: `${runId}-v${versions}`, runId, at: h.now.toISOString(), events }]);
}

async function drive(h: Harness, runId: string, changes: [string, Partial<StepRecord>][], tickMs = 15) {
  for (const [stepId, patch] of changes) {
    await new Promise((r) => setTimeout(r, tickMs));
    const step = await h.store.getStep(runId, stepId);
    if (!step) throw new Error(`no step ${stepId}`);
    await h.store.transitionStep(runId, stepId, { generation: step.generation, from: [step.status] }, patch);
    await announce(h, runId, patch.status === 'running' ? 'StepStarted' : 'StepSucceeded', { stepId });
  }
}

describe('cairn run', () => {
  it('starts a run from an objective and prints its id', async () => {
    const h = await harness();
    const io = await served(h);
    const code = await main(['run', 'say', 'hi', '--direct-target', 'tool:echo'], io);
    expect(code).toBe(0);
    expect(text(io.out)).toBe('run run-1 planning\n');
    expect(await h.store.getRun('run-1')).toMatchObject({ objective: 'say hi', mode: 'DIRECT' });
  });

  it('submits a plan file and reports validation issues with exit 1', async () => {
    const h = await harness();
    const io = await served(h);
    const dir = await mkdtemp(join(tmpdir(), 'cairn-cli-'));
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify(planOf([echoStep('a', { dependsOn: ['zz'] })])));
    const good = join(dir, 'good.json');
    await writeFile(good, JSON.stringify(planOf([echoStep('a')])));
    expect(await main(['run', '--plan', bad], io)).toBe(1);
    expect(text(io.err)).toContain('E_INVALID_PLAN');
    expect(text(io.err)).toContain('E_UNKNOWN_DEPENDENCY /steps/0/dependsOn/0');
    expect(await main(['run', '--plan', good, '--json'], io)).toBe(0);
    expect(JSON.parse(io.out.at(-1) ?? '')).toEqual({ runId: 'run-1', status: 'planning' });
    expect((await h.store.getRun('run-1'))?.mode).toBe('SUBMITTED');
  });

  it('sends the idempotency key', async () => {
    const h = await harness();
    const io = await served(h);
    await main(['run', 'x', '--direct-target', 'tool:echo', '--idempotency-key', 'k'], io);
    await main(['run', 'x', '--direct-target', 'tool:echo', '--idempotency-key', 'k'], io);
    expect(await h.store.listRuns()).toHaveLength(1);
  });

  it('exits 2 on bad usage, an unreadable plan or a missing token', async () => {
    const h = await harness();
    const io = await served(h);
    expect(await main(['run'], io)).toBe(2);
    expect(await main(['run', 'x', '--bogus'], io)).toBe(2);
    expect(await main(['run', '--plan', 'nope.json'], io)).toBe(2);
    expect(await main(['run', 'x', '--plan', 'p.json'], io)).toBe(2);
    expect(await main(['run', 'x', '--interval', '0'], io)).toBe(2);
    const noToken = await served(h, { CAIRN_API_TOKEN: '' });
    expect(await main(['run', 'x'], noToken)).toBe(2);
    expect(text(noToken.err)).toContain('CAIRN_API_TOKEN');
    expect(await h.storedKeys()).toEqual([]);
  });

  it('exits 4 for a wrong token and 5 for an unreachable API, with the message', async () => {
    const h = await harness();
    const io = await served(h, { CAIRN_API_TOKEN: 'wrong' });
    expect(await main(['run', 'x', '--direct-target', 'tool:echo'], io)).toBe(4);
    expect(text(io.err)).toContain('E_UNAUTHORIZED');
    const gone = await served(h, { CAIRN_API_URL: 'http://127.0.0.1:9' });
    expect(await main(['status', 'r'], gone)).toBe(5);
    expect(text(gone.err)).toContain('E_UNREACHABLE');
  });

  it('--watch prints transitions with a counter and exits 0 when the run completes', async () => {
    // Watching waits on the run's event feed between reads of the run: every change below is announced.
    const h = await harness({ eventFeed: { stream: false, pollMs: 5 } });
    const io = await served(h);
    const plan = planOf([echoStep('a'), echoStep('b', { dependsOn: ['a'] })]);
    const dir = await mkdtemp(join(tmpdir(), 'cairn-cli-'));
    const file = join(dir, 'plan.json');
    await writeFile(file, JSON.stringify(plan));
    const run = main(['run', '--plan', file, '--watch', '--interval', '5'], io);
    // The engine's part, simulated: revision 1 with its step records, then the steps move.
    await new Promise((r) => setTimeout(r, 30));
    await h.store.putPlanRevision('run-1', plan, 'initial plan');
    await h.store.putSteps([stepRecord('run-1', 'a'), stepRecord('run-1', 'b')]);
    await h.store.updateRun('run-1', ['planning'], { status: 'running', revision: 1 });
    await announce(h, 'run-1', 'RunStarted');
    await drive(h, 'run-1', [
      ['a', { status: 'running', attempts: 1 }],
      ['a', { status: 'succeeded' }],
      ['b', { status: 'running', attempts: 1 }],
      ['b', { status: 'succeeded' }],
    ]);
    await h.store.updateRun('run-1', ['running'], { status: 'complete' });
    await announce(h, 'run-1', 'RunFinished', { state: 'complete', reason: 'done' });
    expect(await run).toBe(0);
    const out = text(io.out);
    expect(out).toContain('[1/2] ✓ a succeeded');
    expect(out).toContain('[2/2] ✓ b succeeded');
    expect(out).toMatch(/run run-1 complete \(2\/2 steps done\)\n$/);
  });
});

describe('cairn status', () => {
  it('prints the run and its steps', async () => {
    const h = await harness();
    const io = await served(h);
    await seedRun(
      h,
      'r1',
      planOf([echoStep('a'), echoStep('b', { dependsOn: ['a'] })]),
      [
        stepRecord('r1', 'a', { status: 'failed', attempts: 1, error: { code: 'E_BOOM', message: 'it broke' } }),
        stepRecord('r1', 'b', { status: 'blocked' }),
      ],
      { status: 'failed', terminal: { state: 'failed', reason: 'step a failed', evidence: {}, at: 'x' } },
    );
    expect(await main(['status', 'r1'], io)).toBe(0);
    const out = text(io.out);
    expect(out).toContain('run r1  failed  revision 1  [2/2 steps done]');
    expect(out).toContain('failed: step a failed');
    expect(out).toMatch(/failed\s+a {2}\(tool:echo\) {2}attempts 1 {2}E_BOOM: it broke/);
    expect(out).toMatch(/blocked\s+b {2}\(tool:echo\)/);
  });

  it('prints JSON with --json and exits 1 for an unknown run', async () => {
    const h = await harness();
    const io = await served(h);
    await seedRun(h, 'r1', planOf([echoStep('a')]), [stepRecord('r1', 'a')]);
    expect(await main(['status', 'r1', '--json'], io)).toBe(0);
    expect(JSON.parse(text(io.out)).steps[0].id).toBe('a');
    expect(await main(['status', 'nope'], io)).toBe(1);
    expect(text(io.err)).toContain('E_NOT_FOUND');
    expect(await main(['status'], io)).toBe(2);
  });

  it('--watch exits 1 for a failed run and 3 for a paused one', async () => {
    const h = await harness();
    const io = await served(h);
    await seedRun(h, 'f', planOf([echoStep('a')]), [stepRecord('f', 'a', { status: 'failed' })], { status: 'failed' });
    expect(await main(['status', 'f', '--watch', '--interval', '5'], io)).toBe(1);
    await seedRun(h, 'p', planOf([gateStep('g')]), [stepRecord('p', 'g', { status: 'awaiting_approval' })]);
    expect(await main(['status', 'p', '--watch', '--interval', '5'], io)).toBe(3);
    expect(text(io.out)).toContain('run p paused');
    await seedRun(h, 'c', planOf([echoStep('a')]), [stepRecord('c', 'a', { status: 'cancelled' })], {
      status: 'cancelled',
    });
    expect(await main(['status', 'c', '--watch', '--interval', '5'], io)).toBe(1);
  });
});

describe('cairn approvals and cairn approve', () => {
  /** A run waiting at its gate: the approval carries the token its step execution waits on. */
  async function gate(h: Harness): Promise<string> {
    await seedRun(h, 'run-a', planOf([gateStep('gate')]), [
      stepRecord('run-a', 'gate', { status: 'awaiting_approval' }),
    ]);
    const taskToken = await gateToken(h, 'run-a', 'gate');
    await h.store.putApproval(approvalRecord('ap1', { taskToken }));
    return taskToken;
  }

  it('lists pending approvals with their question', async () => {
    const h = await harness();
    const io = await served(h);
    expect(await main(['approvals'], io)).toBe(0);
    expect(text(io.out)).toBe('no pending approvals\n');
    const token = await gate(h);
    io.out.length = 0;
    expect(await main(['approvals'], io)).toBe(0);
    expect(text(io.out)).toContain('ap1  approval  pending  run run-a  step gate');
    expect(text(io.out)).toContain('question: May it go on?');
    expect(text(io.out)).not.toContain(token);
    expect(await main(['approvals', '--status', 'maybe'], io)).toBe(2);
  });

  it('approves once; a second decision exits 1 with the conflict', async () => {
    const h = await harness();
    const io = await served(h);
    await gate(h);
    expect(await main(['approve', 'ap1', '--comment', 'ok'], io)).toBe(0);
    expect(text(io.out)).toBe('approval ap1 approved by local-token (run run-a, step gate)\n');
    expect(h.executions.successes[0]?.output).toEqual({ decision: 'approve', comment: 'ok', by: 'local-token' });
    expect(await main(['approve', 'ap1', '--reject'], io)).toBe(1);
    expect(text(io.err)).toContain('E_ALREADY_DECIDED');
  });

  it('edits with --output and refuses an output that breaks the contract', async () => {
    const h = await harness();
    const io = await served(h);
    await gate(h);
    expect(await main(['approve', 'ap1', '--output', '{"approved":"yes"}'], io)).toBe(1);
    expect(text(io.err)).toContain('E_INVALID_OUTPUT');
    expect(await main(['approve', 'ap1', '--output', '{"approved":true}', '--json'], io)).toBe(0);
    expect(JSON.parse(text(io.out))).toMatchObject({ status: 'edited', output: { approved: true } });
  });

  it('rejects, and refuses bad usage', async () => {
    const h = await harness();
    const io = await served(h);
    await gate(h);
    expect(await main(['approve'], io)).toBe(2);
    expect(await main(['approve', 'ap1', '--reject', '--output', '{}'], io)).toBe(2);
    expect(await main(['approve', 'ap1', '--output', '{bad'], io)).toBe(2);
    expect((await h.store.getApproval('ap1'))?.status).toBe('pending');
    expect(await main(['approve', 'ap1', '--reject'], io)).toBe(0);
    expect((await h.store.getApproval('ap1'))?.status).toBe('rejected');
  });
});
