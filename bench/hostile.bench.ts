/**
 * `npm run bench:hostile`: does `/health` keep answering while the API is fed hostile input? Boots the embedded
 * stack in this process (its HTTP server shares the event loop with everything the stack does, as `npm start`'s
 * does), then fires, concurrently and over HTTP: bodies just under and far over the 1 MB limit, deeply nested JSON,
 * 2,000-step plans to /plans/validate and to POST /runs, plans heavy with expressions, oversized and pathological
 * expressions, and many concurrent small runs — while a probe asks `GET /health` every 50 ms. Prints the /health
 * latency (max, p99, median), what each hostile request was answered, and the worst event-loop stall the process
 * saw (perf_hooks' event-loop delay histogram). Target: max /health latency < 1 s. BENCH_HOSTILE_ROUNDS repeats the
 * salvo (default 2).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startLocalStack } from '../infra/local/boot.ts';
import { CONFORMANCE_TARGETS as T } from '../shared/capabilities/conformance.ts';
import type { PlanStep } from '../shared/plan/schema.ts';

const ROUNDS = Math.max(1, Number(process.env.BENCH_HOSTILE_ROUNDS ?? 2));
const PROBE_MS = 50;
const TARGET_MAX_MS = 1_000;
const MB = 1024 * 1024;

const stack = await startLocalStack({ conformance: true, backoffMs: 5, demoDelayMs: 0, token: 'bench' });
const headers = { authorization: 'Bearer bench', 'content-type': 'application/json' };
const echo = stack.catalog.get(T.echo);
if (!echo) throw new Error('no conformance echo capability');

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

/** A chain of n steps, each reading its predecessor with an expression. */
const chain = (n: number, expression = (prev: string) => `{% $steps.${prev}.output.value %}`) =>
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
      plan: chain(
        64,
        (prev) => `{% ${Array.from({ length: 400 }, () => `$steps.${prev}.output.value`).join(' & ')} %}`,
      ),
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

async function send(name: string, make: () => { path: string; body: string }): Promise<Answer> {
  const started = performance.now();
  try {
    const { path, body } = make();
    const response = await fetch(`${stack.url}${path}`, { method: 'POST', headers, body });
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

/** Many small runs at once: each a 3-step chain. */
async function concurrentRuns(n: number): Promise<Answer[]> {
  const body = JSON.stringify({ plan: chain(3) });
  return Promise.all(Array.from({ length: n }, () => send('concurrent POST /runs', () => ({ path: '/runs', body }))));
}

const latencies: number[] = [];
let probing = true;
async function probe(): Promise<void> {
  while (probing) {
    const started = performance.now();
    const response = await fetch(`${stack.url}/health`);
    await response.text();
    latencies.push(performance.now() - started);
    const left = PROBE_MS - (performance.now() - started);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
  }
}

// BENCH_HOSTILE_EACH=1: first each hostile request alone, with the worst event-loop stall it caused (to find who).
if (process.env.BENCH_HOSTILE_EACH === '1') {
  for (const [name, make] of [...Object.entries(HOSTILE), ['concurrent POST /runs', null] as const]) {
    const alone = monitorEventLoopDelay({ resolution: 10 });
    alone.enable();
    const answer = make === null ? (await concurrentRuns(50))[0] : await send(name, make);
    await stack.settled();
    alone.disable();
    console.log(
      `  alone: ${name.padEnd(36)} ${answer?.status} ${answer?.code}, loop max ${(alone.max / 1e6).toFixed(0)} ms`,
    );
  }
}

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const prober = probe();
const answers: Answer[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const salvo = Object.entries(HOSTILE).map(([name, make]) => send(name, make));
  const [runs, ...rest] = await Promise.all([concurrentRuns(50), ...salvo]);
  answers.push(...rest, ...runs);
}
await stack.settled();
probing = false;
await prober;
loop.disable();
await stack.close();

const sorted = [...latencies].sort((a, b) => a - b);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
const grouped = new Map<string, Answer[]>();
for (const answer of answers) grouped.set(answer.name, [...(grouped.get(answer.name) ?? []), answer]);
console.log('hostile request                       answers');
for (const [name, list] of grouped) {
  const kinds = [...new Set(list.map((a) => `${a.status} ${a.code}`))].join(', ');
  const slowest = Math.max(...list.map((a) => a.ms));
  console.log(`  ${name.padEnd(36)} ${kinds}  (slowest ${slowest.toFixed(0)} ms)`);
}
const max = sorted.at(-1) ?? Number.NaN;
console.log(
  `/health: ${sorted.length} probes, max ${max.toFixed(0)} ms, p99 ${at(0.99).toFixed(0)} ms, median ${at(0.5).toFixed(0)} ms`,
);
console.log(
  `event loop: max delay ${(loop.max / 1e6).toFixed(0)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms`,
);
console.log(`target: max /health < ${TARGET_MAX_MS} ms → ${max < TARGET_MAX_MS ? 'met' : 'NOT met'}`);
const fives = answers.filter((a) => a.status >= 500 || a.status === 0);
if (fives.length > 0)
  console.log(`5xx or no answer: ${fives.map((a) => `${a.name} ${a.status} ${a.code}`).join('; ')}`);
process.exit(0);
