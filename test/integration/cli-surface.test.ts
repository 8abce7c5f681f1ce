/**
 * The `cairn` command against the embedded stack's HTTP API: the commands that read and steer runs (runs, status,
 * step, events, cancel) and every exit code a script may branch on.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { CliIo } from '../../shared/cli/io.ts';
import { main } from '../../shared/cli/main.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { plan, step, useTestStack, waitForRun } from '../support/local-stack.ts';

const stack = useTestStack();

interface Cli extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

function cli(env: Record<string, string> = {}): Cli {
  const out: string[] = [];
  const err: string[] = [];
  return {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: { CAIRN_API_URL: stack.url, CAIRN_API_TOKEN: stack.token, ...env },
    cwd: tmpdir(),
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

async function cairn(args: string[], env: Record<string, string> = {}) {
  const io = cli(env);
  const code = await main(args, io);
  return { code, out: io.out(), err: io.err() };
}

async function planFile(objective: string, steps: PlanStep[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-cli-'));
  const file = join(dir, 'plan.json');
  await writeFile(file, JSON.stringify(plan(objective, steps)));
  return file;
}

const echo = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

const lines = (text: string): Record<string, unknown>[] =>
  text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('cairn run --watch against the embedded stack', () => {
  it('exits 0 for a run that completes, and prints JSON lines with --json', async () => {
    const file = await planFile('completes', [echo('a'), echo('b', { dependsOn: ['a'] })]);

    const { code, out } = await cairn(['run', '--plan', file, '--watch', '--json', '--interval', '20']);

    expect(code).toBe(0);
    const events = lines(out);
    expect(events[0]).toMatchObject({ status: 'planning' });
    expect(events.at(-1)).toMatchObject({ event: 'end', status: 'complete', done: 2, total: 2 });
    expect(events.filter((e) => e.event === 'step').map((e) => e.stepId)).toContain('b');
  });

  it('exits 1 for a run that fails', async () => {
    const file = await planFile('fails', [
      step(stack, 'x', T.fail, { input: { message: 'no', retryable: false }, maxRetries: 0 }),
    ]);

    const { code, out, err } = await cairn(['run', '--plan', file, '--watch', '--interval', '20']);

    expect([code, err]).toEqual([1, '']);
    expect(out).toContain('failed');
  });

  it('exits 3 for a run that waits for a person', async () => {
    const gate = step(stack, 'gate', T.approver, { input: {}, approval: { question: 'Go?', timeoutSeconds: 300 } });
    const file = await planFile('waits', [gate]);

    const { code, out } = await cairn(['run', '--plan', file, '--watch', '--interval', '20']);

    expect(code).toBe(3);
    expect(out).toContain('paused');
  });
});

describe('cairn runs', () => {
  it('lists the runs newest first, pages through them all with --all, and filters by status', async () => {
    for (const name of ['one', 'two', 'three']) await stack.startRun({ plan: plan(name, [echo('a')]) });

    const page = await cairn(['runs', '--limit', '2', '--json']);
    const all = await cairn(['runs', '--limit', '2', '--all', '--json']);
    const complete = await cairn(['runs', '--status', 'failed']);

    expect(page.code).toBe(0);
    expect(JSON.parse(page.out)).toHaveLength(2);
    const everything = JSON.parse(all.out) as { runId: string; objective: string }[];
    expect(everything.length).toBeGreaterThanOrEqual(5);
    expect(new Set(everything.map((r) => r.runId)).size).toBe(everything.length);
    expect(everything[0]?.objective).toBe('three');
    expect(complete.out).toMatch(/failed/);
    expect(complete.out).not.toMatch(/ complete /);
  });
});

describe('cairn step, events and cancel', () => {
  it('shows one step whole', async () => {
    const runId = await stack.startRun({ plan: plan('step', [echo('a')]) });
    await waitForRun(stack, runId);

    const text = await cairn(['step', runId, 'a']);
    const json = await cairn(['step', runId, 'a', '--json']);
    const missing = await cairn(['step', runId, 'nope']);

    expect(text.code).toBe(0);
    expect(text.out).toContain(`step a  succeeded  (${T.echo})  run ${runId}`);
    expect(text.out).toMatch(/g1 #1 succeeded/);
    expect(JSON.parse(json.out)).toMatchObject({ runId, step: { id: 'a' }, record: { output: { value: 'a' } } });
    expect([missing.code, missing.err]).toEqual([1, expect.stringContaining('E_NOT_FOUND')]);
  });

  it('prints the audit log, and --follow goes on until the run finishes', async () => {
    const runId = await stack.startRun({
      plan: plan('events', [step(stack, 's', T.sleep, { input: { ms: 300 } }), echo('b', { dependsOn: ['s'] })]),
    });

    const followed = await cairn(['events', runId, '--follow', '--json', '--interval', '20']);
    const listed = await cairn(['events', runId]);

    expect([followed.code, followed.err]).toEqual([0, '']);
    const events = lines(followed.out);
    expect(events.at(-1)).toMatchObject({ type: 'RunFinished', detail: { state: 'complete' } });
    expect(events.map((e) => e.type)).toContain('StepSucceeded');
    expect(listed.out).toContain('RunFinished');
    expect(listed.out.trim().split('\n')).toHaveLength(events.length);
  });

  it('cancels a run, and a cancelled run watched exits 1', async () => {
    const runId = await stack.startRun({
      plan: plan('cancel', [step(stack, 's', T.sleep, { input: { ms: 20_000 } })]),
    });
    await waitForRun(stack, runId, (run) => run.status === 'running');

    const cancelled = await cairn(['cancel', runId, '--compensate']);
    const watched = await cairn(['status', runId, '--watch', '--interval', '20']);

    expect(cancelled.code).toBe(0);
    expect(cancelled.out).toMatch(new RegExp(`run ${runId} (cancelled|is being cancelled)`));
    expect(watched.code).toBe(1);
    expect(watched.out).toContain('cancelled');
  });
});

describe('exit codes', () => {
  it('are 2 for bad usage, 4 for a wrong token and 5 for an API that cannot be reached', async () => {
    const usage = await cairn(['runs', '--stauts', 'x']);
    const unauthorized = await cairn(['runs'], { CAIRN_API_TOKEN: 'wrong' });
    const unreachable = await cairn(['runs'], { CAIRN_API_URL: 'http://127.0.0.1:9' });

    expect([usage.code, usage.err]).toEqual([2, expect.stringContaining('did you mean "--status"?')]);
    expect([unauthorized.code, unauthorized.err]).toEqual([4, expect.stringContaining('E_UNAUTHORIZED')]);
    expect([unreachable.code, unreachable.err]).toEqual([5, expect.stringContaining('E_UNREACHABLE')]);
    expect(unreachable.err).toContain('trying again');
  });
});
