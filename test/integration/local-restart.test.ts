/**
 * `npm start` on a data directory, as a user runs it: a child process is killed with SIGKILL in the middle of a run
 * of ledger and sleep steps and started again on the same directory. The run must reach `complete` and every
 * mutating step generation must appear exactly once in the conformance ledger; a second process on the directory
 * while the first runs must stop at once, naming the directory and the first one's pid.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { conformanceCatalog, CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';

const START = fileURLToPath(new URL('../../bin/start.js', import.meta.url));
const TOKEN = 'restart-test-token';
const BOOT_TIMEOUT_MS = 120_000;

interface Child {
  readonly process: ChildProcess;
  readonly url: string;
  readonly output: () => string;
}

function launch(dataDir: string): { process: ChildProcess; ready: Promise<Child>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [START, '--no-demo', '--conformance', '--port', '0', '--data-dir', dataDir], {
    env: { ...process.env, CAIRN_API_TOKEN: TOKEN, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<Child>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no API URL within ${BOOT_TIMEOUT_MS} ms:\n${output}`)),
      BOOT_TIMEOUT_MS,
    );
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const url = /cairn: API\s+(\S+)/.exec(output)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ process: child, url, output: () => output });
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the child exited (${code}) before answering:\n${output}`));
    });
  });
  ready.catch(() => undefined);
  return { process: child, ready, exited };
}

/** The parts of the API's answers this test reads. */
interface Answer {
  readonly runId?: string;
  readonly status?: string;
  readonly steps?: { readonly id: string; readonly status: string }[];
  readonly entries?: { readonly runId: string; readonly stepId: string; readonly generation: number }[];
}

async function api(
  child: Child,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Answer }> {
  const response = await fetch(`${child.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: (text ? JSON.parse(text) : {}) as Answer };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const catalog = new Map(conformanceCatalog().capabilities.map((c) => [c.target, c]));
function step(id: string, target: string, input: unknown, dependsOn: string[] = []): PlanStep {
  const capability = catalog.get(target);
  if (!capability) throw new Error(`no ${target}`);
  return {
    id,
    title: `Step ${id}`,
    target,
    dependsOn,
    input,
    inputSchema: capability.inputSchema,
    outputSchema: capability.outputSchema,
    ...(capability.sideEffect === 'mutating' ? { rollbackHint: 'remove the entry' } : {}),
  } as PlanStep;
}

/** Two chains of ledger → sleep → ledger, and a ledger that waits for both: five side effects, two long sleeps. */
const PLAN = {
  schemaVersion: 1,
  revision: 1,
  objective: 'survive a kill -9',
  steps: [
    step('a1', T.ledger, { entry: 'a1' }),
    step('a2', T.sleep, { ms: 4000 }, ['a1']),
    step('a3', T.ledger, { entry: 'a3' }, ['a2']),
    step('b1', T.ledger, { entry: 'b1' }),
    step('b2', T.sleep, { ms: 5000 }, ['b1']),
    step('b3', T.ledger, { entry: 'b3' }, ['b2']),
    step('z', T.ledger, { entry: 'z' }, ['a3', 'b3']),
  ],
};
const LEDGER_STEPS = ['a1', 'a3', 'b1', 'b3', 'z'];

describe('npm start on a data directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-restart-'));
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second process and carries a run on to complete after kill -9, each side effect once', async () => {
    const first = launch(dir);
    children.push(first.process);
    const one = await first.ready;

    // A second process on the same directory stops at once and names the directory and the owner.
    const second = launch(dir);
    children.push(second.process);
    expect(await second.exited).toBe(1);
    await expect(second.ready).rejects.toThrow(/E_DATA_DIR_LOCKED/);
    await expect(second.ready).rejects.toThrow(new RegExp(`pid ${first.process.pid}`));
    await expect(second.ready).rejects.toThrow(dir);
    expect((await api(one, 'GET', '/health')).status).toBe(200);

    const started = await api(one, 'POST', '/runs', { plan: PLAN });
    expect(started.status).toBe(202);
    const runId = String(started.json.runId);
    // In the middle: both first side effects done, both sleeps running.
    await until('both sleeps running', async () => {
      const { json } = await api(one, 'GET', `/runs/${runId}`);
      const running = (json.steps ?? []).filter((s) => s.status === 'running');
      return running.some((s) => s.id === 'a2') && running.some((s) => s.id === 'b2') ? true : undefined;
    });
    first.process.kill('SIGKILL');
    await first.exited;

    const again = launch(dir);
    children.push(again.process);
    const two = await again.ready;
    // The lines after the API's come in later chunks of the pipe.
    const said = await until('the resumed line', async () =>
      /resumed .*\n/.test(two.output()) ? two.output() : undefined,
    );
    expect(said).toMatch(/resumed 1 run execution\(s\) and 2 step execution\(s\)/);
    const run = await until('the run to finish', async () => {
      const { json } = await api(two, 'GET', `/runs/${runId}`);
      return ['complete', 'failed', 'cancelled'].includes(json.status ?? '') ? json : undefined;
    });
    expect(run.status).toBe('complete');

    const { json: ledger } = await api(two, 'GET', '/conformance/ledger');
    const mine = (ledger.entries ?? []).filter((e) => e.runId === runId);
    const generations = mine.map((e) => `${e.stepId}#${e.generation}`).sort();
    expect(generations).toEqual(LEDGER_STEPS.map((id) => `${id}#1`).sort());
    again.process.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 300_000);
});
