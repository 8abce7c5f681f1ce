/**
 * `npm run bench:hostile`: does `/health` keep answering while the API is fed hostile input? Boots the embedded
 * stack in a child process (as `npm start` runs it: its HTTP server shares the event loop with everything the stack
 * does, and with no client), then fires at it over HTTP: bodies just under and far over the 1 MB limit, deeply
 * nested JSON, 2,000-step plans to /plans/validate and to POST /runs, plans heavy with expressions, oversized and
 * pathological expressions, and many concurrent small runs — while a probe asks `GET /health` every 50 ms. The
 * client is its own process, so building and sending 20 MB bodies is not counted as the server's stall.
 *
 * First each hostile request alone, then all of them at once (BENCH_HOSTILE_ROUNDS salvos, default 2); for each
 * it prints the /health latency (max, p99, median) and the worst event-loop stall the server saw (perf_hooks'
 * event-loop delay histogram, read in the server). Target: max /health latency < 1 s.
 * BENCH_HOSTILE_PROFILE=DIR writes the server's CPU profile there (`--cpu-prof`).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { startLocalStack } from '../infra/local/boot.ts';
import { CONFORMANCE_TARGETS as T } from '../shared/capabilities/conformance.ts';
import type { PlanStep } from '../shared/plan/schema.ts';
import { BIG, bigInvalidations } from './hostile/big-invalidation.ts';

const ROUNDS = Math.max(1, Number(process.env.BENCH_HOSTILE_ROUNDS ?? 2));
/** BENCH_HOSTILE_ONLY=text,text: only the cases whose name contains one of them (profiling one at a time). */
const ONLY = (process.env.BENCH_HOSTILE_ONLY ?? '')
  .split(',')
  .map((text) => text.trim())
  .filter((text) => text !== '');
const chosen = (name: string) => ONLY.length === 0 || ONLY.some((text) => name.includes(text));
const PROBE_MS = 50;
const TARGET_MAX_MS = 1_000;
const MB = 1024 * 1024;

const TOKEN = 'bench';

/** Messages between the client (this process) and the server (the child that runs the stack). */
type ToServer = { kind: 'reset' } | { kind: 'settle' } | { kind: 'close' };
type FromServer =
  | { kind: 'ready'; url: string; echo: Pick<PlanStep, 'inputSchema' | 'outputSchema'> }
  | { kind: 'reset' }
  | { kind: 'settled'; loopMaxMs: number; loopP99Ms: number; rssBaseMb: number; rssPeakMb: number };

if (process.env.BENCH_HOSTILE_SERVER === '1') {
  await serve();
} else {
  await drive();
}

/** The server side: the stack, and the event-loop delay histogram the client asks for. */
async function serve(): Promise<void> {
  // The big invalidation's webhook is signed with this source's secret, and its 2,000-step run is over the default limit.
  process.env.CAIRN_WEBHOOK_SECRETS = JSON.stringify({ [BIG.source]: BIG.secret });
  const stack = await startLocalStack({
    conformance: true,
    backoffMs: 5,
    demoDelayMs: 0,
    token: TOKEN,
    limits: { maxSteps: BIG.steps + 1 },
  });
  const echo = stack.catalog.get(T.echo);
  if (!echo) throw new Error('no conformance echo capability');
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  // Profiling: the stalls' windows (monotonic µs, the CPU profile's clock), to find what ran in them.
  const stalls: [number, number][] = [];
  let last = process.hrtime.bigint();
  if (process.env.BENCH_HOSTILE_PROFILE)
    setInterval(() => {
      const now = process.hrtime.bigint();
      if (now - last > 150_000_000n) stalls.push([Number(last / 1000n), Number(now / 1000n)]);
      last = now;
    }, 10).unref();
  // The resident set, sampled: its peak since the last reset, against what it was at the reset.
  const rss = () => process.memoryUsage().rss / MB;
  let rssBase = rss();
  let rssPeak = rssBase;
  setInterval(() => {
    rssPeak = Math.max(rssPeak, rss());
  }, 50).unref();
  const send = (message: FromServer) => process.send?.(message);
  process.on('message', (message: ToServer) => {
    if (message.kind === 'reset') {
      loop.reset();
      rssBase = rss();
      rssPeak = rssBase;
      send({ kind: 'reset' });
    } else if (message.kind === 'settle') {
      void stack.settled().then(() => {
        const rssPeakMb = Math.max(rssPeak, rss());
        send({
          kind: 'settled',
          loopMaxMs: loop.max / 1e6,
          loopP99Ms: loop.percentile(99) / 1e6,
          rssBaseMb: rssBase,
          rssPeakMb,
        });
      });
    } else {
      if (process.env.BENCH_HOSTILE_PROFILE)
        writeFileSync(join(process.env.BENCH_HOSTILE_PROFILE, 'stalls.json'), JSON.stringify(stalls));
      void stack.close().then(() => process.exit(0));
    }
  });
  send({ kind: 'ready', url: stack.url, echo: { inputSchema: echo.inputSchema, outputSchema: echo.outputSchema } });
}

async function drive(): Promise<void> {
  const profile = process.env.BENCH_HOSTILE_PROFILE;
  const server: ChildProcess = fork(fileURLToPath(import.meta.url), [], {
    execArgv: [...process.execArgv, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])],
    env: { ...process.env, BENCH_HOSTILE_SERVER: '1' },
  });
  const replies: FromServer[] = [];
  const waiting: ((message: FromServer) => void)[] = [];
  server.on('message', (message: FromServer) => {
    const next = waiting.shift();
    if (next) next(message);
    else replies.push(message);
  });
  const reply = (): Promise<FromServer> =>
    new Promise((resolve) => {
      const queued = replies.shift();
      if (queued) resolve(queued);
      else waiting.push(resolve);
    });
  const ask = async (message: ToServer): Promise<FromServer> => {
    server.send(message);
    return reply();
  };
  const ready = await reply();
  if (ready.kind !== 'ready') throw new Error(`the server said ${ready.kind} first`);
  const { url, echo } = ready;
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

  const step = (id: string, fields: Partial<PlanStep> = {}): PlanStep => ({
    id,
    title: `step ${id}`,
    target: T.echo,
    dependsOn: [],
    inputSchema: echo.inputSchema,
    outputSchema: echo.outputSchema,
    input: { value: id },
    ...fields,
  });
  const plan = (steps: PlanStep[]) => ({ schemaVersion: 1, revision: 1, objective: 'hostile', steps });

  /** A chain of n steps, each reading its predecessor's output with an expression. */
  const chain = (n: number, expression = (prev: string) => `{% $outputs.${prev}.value %}`) =>
    plan(
      Array.from({ length: n }, (_, i) =>
        i === 0 ? step('s0') : step(`s${i}`, { dependsOn: [`s${i - 1}`], input: { value: expression(`s${i - 1}`) } }),
      ),
    );

  const HOSTILE: Record<string, () => { path: string; body: string }> = {
    'body just under 1 MB': () => ({
      path: '/plans/validate',
      body: JSON.stringify({ plan: { ...plan([step('a')]), objective: 'x'.repeat(MB - 400) } }),
    }),
    'body just over 1 MB': () => ({
      path: '/runs',
      body: JSON.stringify({ plan: plan([step('a')]), pad: 'x'.repeat(MB) }),
    }),
    'body of 20 MB': () => ({ path: '/plans/validate', body: `{"plan":"${'x'.repeat(20 * MB)}"}` }),
    'nested arrays 200,000 deep': () => ({
      path: '/plans/validate',
      body: `{"plan":${'['.repeat(200_000)}${']'.repeat(200_000)}}`,
    }),
    'nested objects 100,000 deep': () => ({
      path: '/runs',
      body: `{"plan":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`,
    }),
    '2,000-step plan to /plans/validate': () => ({
      path: '/plans/validate',
      body: JSON.stringify({ plan: chain(2_000) }),
    }),
    '2,000-step plan to POST /runs': () => ({ path: '/runs', body: JSON.stringify({ plan: chain(2_000) }) }),
    '64 steps of long expressions': () => ({
      path: '/plans/validate',
      body: JSON.stringify({
        plan: chain(64, (prev) => `{% ${Array.from({ length: 400 }, () => `$outputs.${prev}.value`).join(' & ')} %}`),
      }),
    }),
    'a 500 KB expression': () => ({
      path: '/plans/validate',
      body: JSON.stringify({
        plan: plan([step('a', { input: { value: `{% ${'(1 + '.repeat(60_000)}1${')'.repeat(60_000)} %}` } })]),
      }),
    }),
    'pathological regex and recursion': () => ({
      path: '/runs',
      body: JSON.stringify({
        plan: plan([
          step('r', { input: { value: '{% $match("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", /(a+)+$/) %}' } }),
          step('f', { input: { value: '{% ($f := function($n){ $f($n+1) }; $f(0)) %}' } }),
        ]),
      }),
    }),
  };

  interface Answer {
    readonly name: string;
    readonly status: number;
    readonly code: string;
    readonly ms: number;
  }

  async function send(name: string, request: { path: string; body: string }): Promise<Answer> {
    const started = performance.now();
    try {
      const response = await fetch(`${url}${request.path}`, { method: 'POST', headers, body: request.body });
      const text = await response.text();
      let code = '';
      try {
        const json = JSON.parse(text) as { error?: { code?: string }; valid?: boolean; runId?: string };
        code = json.error?.code ?? (json.valid === undefined ? (json.runId ? 'run' : '') : `valid=${json.valid}`);
      } catch {
        code = text.slice(0, 40);
      }
      return { name, status: response.status, code, ms: performance.now() - started };
    } catch (error) {
      return {
        name,
        status: 0,
        code: error instanceof Error ? error.message : String(error),
        ms: performance.now() - started,
      };
    }
  }

  const CONCURRENT = 'concurrent POST /runs (50)';
  const small = { path: '/runs', body: JSON.stringify({ plan: chain(3) }) };
  /** Many small runs at once: each a 3-step chain. */
  const concurrentRuns = (n: number): Promise<Answer[]> =>
    Promise.all(Array.from({ length: n }, () => send(CONCURRENT, small)));

  // Built before anything is measured: the client's own work is not the server's.
  const bodies = Object.entries(HOSTILE)
    .filter(([name]) => chosen(name))
    .map(([name, make]) => ({ name, request: make() }));
  const withRuns = chosen(CONCURRENT);

  interface Measure {
    readonly probes: number[];
    readonly loopMaxMs: number;
    readonly answers: Answer[];
    /** The server's resident set: its peak during the load, less what it was before. */
    readonly rssGrowthMb: number;
  }

  /** Runs `load` while a probe asks /health every PROBE_MS, until the load is answered and the stack settled. */
  /**
   * The probe asks /health from a thread of its own: this thread's event loop is busy sending the hostile bodies and
   * reading their answers, and its delays are not the server's.
   */
  const PROBE_CODE = `
    const { parentPort, workerData } = require('node:worker_threads');
    let probing = false;
    let probes = [];
    let loop;
    const probe = async () => {
      while (probing) {
        const started = performance.now();
        const response = await fetch(workerData.url + '/health');
        await response.text();
        probes.push(performance.now() - started);
        const left = workerData.everyMs - (performance.now() - started);
        if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
      }
    };
    parentPort.on('message', async (message) => {
      if (message === 'start') {
        probes = [];
        probing = true;
        loop = probe();
        parentPort.postMessage('started');
      } else {
        probing = false;
        await loop;
        parentPort.postMessage(probes);
      }
    });
  `;
  const prober = new Worker(PROBE_CODE, { eval: true, workerData: { url, everyMs: PROBE_MS } });
  const fromProber = <T>(): Promise<T> => new Promise((resolve) => prober.once('message', resolve));

  /** Runs `load` while the probe asks /health every PROBE_MS, until the load is answered and the stack settled. */
  async function measure(load: () => Promise<Answer[]>): Promise<Measure> {
    await ask({ kind: 'reset' });
    const started = fromProber<string>();
    prober.postMessage('start');
    await started;
    const answers = await load();
    const settled = await ask({ kind: 'settle' });
    const probes = fromProber<number[]>();
    prober.postMessage('stop');
    if (settled.kind !== 'settled') throw new Error(`the server said ${settled.kind} to settle`);
    const rssGrowthMb = settled.rssPeakMb - settled.rssBaseMb;
    return { probes: await probes, loopMaxMs: settled.loopMaxMs, answers, rssGrowthMb };
  }

  const summary = ({ probes, loopMaxMs, rssGrowthMb }: Measure): string => {
    const sorted = [...probes].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
    const ms = (n: number) => `${n.toFixed(0)}`.padStart(5);
    const over = probes.filter((p) => p > TARGET_MAX_MS).length;
    return `/health max ${ms(sorted.at(-1) ?? Number.NaN)} p99 ${ms(at(0.99))} median ${ms(at(0.5))} ms (${String(sorted.length).padStart(3)} probes, ${over} over ${TARGET_MAX_MS / 1000} s), loop stall ${ms(loopMaxMs)} ms, RSS +${rssGrowthMb.toFixed(0)} MB`;
  };
  const answered = (answers: readonly Answer[]): string =>
    [...new Set(answers.map((a) => `${a.status} ${a.code}`))].join(', ');

  // A warm-up, unmeasured: the first request of each kind compiles code the later ones reuse.
  for (const { name, request } of bodies) await send(name, request);
  if (withRuns) await concurrentRuns(5);
  await ask({ kind: 'settle' });

  const results: { name: string; measure: Measure }[] = [];
  console.log('each hostile request alone');
  for (const { name, request } of [...bodies, ...(withRuns ? [{ name: CONCURRENT, request: undefined }] : [])]) {
    const measured = await measure(async () =>
      request === undefined ? concurrentRuns(50) : [await send(name, request)],
    );
    results.push({ name, measure: measured });
    console.log(`  ${name.padEnd(36)} ${summary(measured)}  → ${answered(measured.answers)}`);
  }

  const together = await measure(async () => {
    const answers: Answer[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const salvo = bodies.map(({ name, request }) => send(name, request));
      const [runs, ...rest] = await Promise.all([withRuns ? concurrentRuns(50) : [], ...salvo]);
      answers.push(...rest, ...runs);
    }
    return answers;
  });
  console.log(`all together (${ROUNDS} salvos)`);
  const grouped = new Map<string, Answer[]>();
  for (const answer of together.answers) grouped.set(answer.name, [...(grouped.get(answer.name) ?? []), answer]);
  for (const [name, list] of grouped) {
    const slowest = Math.max(...list.map((a) => a.ms));
    console.log(`  ${name.padEnd(36)} ${answered(list)}  (slowest ${slowest.toFixed(0)} ms)`);
  }
  console.log(`  ${'all together'.padEnd(36)} ${summary(together)}`);
  const bigName = 'big invalidation';
  if (chosen(bigName)) {
    console.log(`${bigName}: a root and ${BIG.steps - 1} dependents, each watching one resource`);
    const big = await bigInvalidations({ url, headers, echo, measure });
    for (const { name, measure: measured } of big) {
      results.push({ name, measure: measured });
      console.log(`  ${name.padEnd(44)} ${summary(measured)}  → ${answered(measured.answers) || 'measured'}`);
    }
  }
  const probes = [...together.probes, ...results.flatMap((r) => r.measure.probes)];
  const max = Math.max(...probes);
  const over = probes.filter((p) => p > TARGET_MAX_MS).length;
  console.log(
    `target: max /health < ${TARGET_MAX_MS} ms → ${max < TARGET_MAX_MS ? 'met' : 'NOT met'} (worst ${max.toFixed(0)} ms; ${over} of ${probes.length} probes over ${TARGET_MAX_MS} ms)`,
  );
  const fives = [...together.answers, ...results.flatMap((r) => r.measure.answers)].filter(
    (a) => a.status >= 500 || a.status === 0,
  );
  if (fives.length > 0)
    console.log(`5xx or no answer: ${[...new Set(fives.map((a) => `${a.name} ${a.status} ${a.code}`))].join('; ')}`);
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.send({ kind: 'close' } satisfies ToServer);
  await exited;
  // Its port listener would keep this process alive after the report.
  await prober.terminate();
}
