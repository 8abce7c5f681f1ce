/**
 * Scale on `npm start`: one N-step zero-work plan (2,000 by default, limits raised by CAIRN_MAX_STEPS), run through
 * the HTTP API of a real `npm start -- --no-demo --conformance --in-memory` child process, as a user would. Prints
 * the time from POST /runs to the run's terminal state, the run's status, how its steps page through GET /runs/{id},
 * and the child's peak resident memory (VmHWM from /proc, Linux only). In memory: a bench keeps nothing on disk.
 *
 *   npm run bench:scale [-- --steps 2000 --width 50]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { steps: { type: 'string', default: '2000' }, width: { type: 'string', default: '50' } },
});
const STEPS = Number(values.steps);
const WIDTH = Number(values.width);
const TOKEN = 'bench-scale-token';
const PORT = 3000 + Math.floor(Math.random() * 2000);
const URL_BASE = `http://127.0.0.1:${PORT}`;

/** Layers of WIDTH steps; each step depends on one step of the layer before (a wide, deep DAG). */
function plan(): unknown {
  const steps = Array.from({ length: STEPS }, (_, i) => {
    const layer = Math.floor(i / WIDTH);
    const parent = layer === 0 ? [] : [`s${(layer - 1) * WIDTH + (i % WIDTH)}`];
    return {
      id: `s${i}`,
      title: `step ${i}`,
      target: 'tool:conformance.echo',
      dependsOn: parent,
      input: { value: i },
      inputSchema: { type: 'object', properties: { value: {} }, required: ['value'], additionalProperties: false },
      outputSchema: { type: 'object', properties: { value: {} }, required: ['value'], additionalProperties: false },
    };
  });
  return { schemaVersion: 1, revision: 1, objective: `scale: ${STEPS} zero-work steps`, steps };
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${URL_BASE}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json().catch(() => null) };
}

function peakRssMb(child: ChildProcess): number {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    return Math.round(kb / 1024);
  } catch {
    return Number.NaN;
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const child = spawn(
  process.execPath,
  ['bin/start.js', '--no-demo', '--conformance', '--in-memory', '--port', String(PORT)],
  {
    env: { ...process.env, CAIRN_API_TOKEN: TOKEN, CAIRN_MAX_STEPS: String(STEPS), CAIRN_MAX_DEPTH: '64' },
    stdio: ['ignore', 'ignore', 'inherit'],
  },
);
let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, peakRssMb(child) || 0);
}, 500);
try {
  await until(
    'the stack answering',
    async () => ((await api('GET', '/health')).status === 200 ? true : undefined),
    120_000,
  );
  const started = performance.now();
  const created = await api('POST', '/runs', { plan: plan() });
  if (created.status !== 202) throw new Error(`POST /runs answered ${created.status}: ${JSON.stringify(created.json)}`);
  const { runId } = created.json as { runId: string };
  let last = '';
  const status = await until(
    'the run ending',
    async () => {
      const { json } = await api('GET', `/runs/${runId}?limit=1`);
      const run = json as { status: string };
      if (run.status !== last) process.stderr.write(`run ${runId}: ${run.status}\n`);
      last = run.status;
      return ['complete', 'failed', 'cancelled', 'paused'].includes(run.status) ? run.status : undefined;
    },
    30 * 60_000,
  );
  const seconds = (performance.now() - started) / 1000;
  let pages = 0;
  let steps = 0;
  let succeeded = 0;
  let cursor: string | undefined;
  do {
    const { json } = await api('GET', `/runs/${runId}${cursor ? `?cursor=${cursor}` : ''}`);
    const page = json as { steps: { status: string }[]; nextCursor?: string };
    pages += 1;
    steps += page.steps.length;
    succeeded += page.steps.filter((s) => s.status === 'succeeded').length;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  peak = Math.max(peak, peakRssMb(child) || 0);
  console.log(`scale: ${STEPS} steps (${WIDTH} wide, ${Math.ceil(STEPS / WIDTH)} layers) → run ${status}`);
  console.log(
    `scale: POST /runs → terminal ${seconds.toFixed(1)} s (${((seconds * 1000) / STEPS).toFixed(1)} ms/step)`,
  );
  console.log(`scale: GET /runs/{id} paged ${steps} steps in ${pages} pages, ${succeeded} succeeded`);
  console.log(`scale: peak RSS of npm start ${peak} MB`);
  process.exitCode = status === 'complete' && succeeded === STEPS ? 0 : 1;
} finally {
  clearInterval(sampler);
  child.kill('SIGTERM');
}
