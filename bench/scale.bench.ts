/**
 * Scale on `npm start`, with AWS's account quotas on (the embedded runtime's --aws-quotas): what the quotas absorb
 * and what gets through. Each workload runs in its own `npm start -- --no-demo --conformance --in-memory` child
 * process, driven through the HTTP API as a user would:
 * - `runs`: many concurrent small runs (default 1,000 runs of 20 zero-work steps, 5 wide);
 * - `wide`: one large plan whose middle layer is wide (default 5,000 steps, the middle layer 2,000 wide);
 * - `layers`: one N-step plan in layers of `--width` (the earlier bench: 2,000 steps, 50 wide).
 * For each it prints the runs' end states, the steps by status, steps succeeded per second (first POST /runs to the
 * last run's end), the throttles absorbed by kind (as the stack counts them: quotas/throttle-counter.ts) and the
 * child's peak RSS. It exits 1 when a step did not succeed or a run did not complete.
 *
 *   npm run bench:scale [-- --workload runs|wide|layers|all] [--lambda-concurrency 8] [--sfn-start-rate 50]
 *                       [--runs 1000] [--run-steps 20] [--steps 5000] [--middle 2000] [--width 50] [--no-quotas]
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { conformanceCatalog } from '../shared/capabilities/conformance.ts';
import { addCounts, apiOf, startRuns, stepStatuses, waitForRuns } from './scale/drive.ts';
import { benchCatalog, layeredPlan, type ScalePlan, smallRunPlan, widePlan } from './scale/plans.ts';
import { startStackProcess } from './scale/stack-process.ts';

const { values } = parseArgs({
  options: {
    workload: { type: 'string', default: 'all' },
    runs: { type: 'string', default: '1000' },
    'run-steps': { type: 'string', default: '20' },
    'run-width': { type: 'string', default: '5' },
    steps: { type: 'string' },
    middle: { type: 'string', default: '2000' },
    width: { type: 'string', default: '50' },
    'lambda-concurrency': { type: 'string' },
    'sfn-start-rate': { type: 'string' },
    'no-quotas': { type: 'boolean', default: false },
    // Accepted for the issue's command line (quotas are on unless --no-quotas).
    'aws-quotas': { type: 'boolean', default: true },
    'timeout-minutes': { type: 'string', default: '30' },
    concurrency: { type: 'string', default: '32' },
  },
});

const number = (name: string, raw: string | undefined): number => {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a whole number ≥ 1, got ${raw}`);
  return value;
};

const quotaFlags = [
  ...(values['no-quotas'] ? [] : ['--aws-quotas']),
  ...(values['lambda-concurrency'] === undefined ? [] : ['--lambda-concurrency', values['lambda-concurrency']]),
  ...(values['sfn-start-rate'] === undefined ? [] : ['--sfn-start-rate', values['sfn-start-rate']]),
];
if (values['no-quotas'] && quotaFlags.length > 0) throw new Error('--no-quotas and a lowered quota exclude each other');
const clientConcurrency = number('concurrency', values.concurrency);
const echo = conformanceCatalog().capabilities.find((c) => c.target === 'tool:conformance.echo');
if (echo === undefined) throw new Error('the conformance pack has no echo');
const catalogFile = join(mkdtempSync(join(tmpdir(), 'cairn-bench-scale-')), 'catalog.json');
writeFileSync(catalogFile, JSON.stringify(benchCatalog(echo as unknown as Record<string, unknown>)));
const timeoutMs = number('timeout-minutes', values['timeout-minutes']) * 60_000;

interface Workload {
  readonly name: string;
  readonly describe: string;
  readonly plans: () => ScalePlan[];
  readonly maxSteps: number;
}

function workloads(): Workload[] {
  const runs = number('runs', values.runs);
  const runSteps = number('run-steps', values['run-steps']);
  const runWidth = number('run-width', values['run-width']);
  const wideSteps = number('steps', values.steps ?? '5000');
  const middle = number('middle', values.middle);
  const layerSteps = number('steps', values.steps ?? '2000');
  const width = number('width', values.width);
  const all: Workload[] = [
    {
      name: 'runs',
      describe: `${runs} concurrent runs of ${runSteps} steps (${runWidth} wide)`,
      plans: () => Array.from({ length: runs }, (_, i) => smallRunPlan(i, runSteps, runWidth)),
      maxSteps: runSteps,
    },
    {
      name: 'wide',
      describe: `one ${wideSteps}-step plan, its middle layer ${middle} wide`,
      plans: () => [widePlan(wideSteps, middle)],
      maxSteps: wideSteps,
    },
    {
      name: 'layers',
      describe: `one ${layerSteps}-step plan in layers ${width} wide`,
      plans: () => [
        layeredPlan(
          `scale: ${layerSteps} steps, ${width} wide`,
          Array.from({ length: Math.ceil(layerSteps / width) }, (_, i) => Math.min(width, layerSteps - i * width)),
        ),
      ],
      maxSteps: layerSteps,
    },
  ];
  const chosen = values.workload === 'all' ? ['runs', 'wide'] : String(values.workload).split(',');
  const unknown = chosen.filter((name) => !all.some((w) => w.name === name));
  if (unknown.length > 0) throw new Error(`unknown workload ${unknown.join(', ')} (runs, wide, layers, all)`);
  return all.filter((w) => chosen.includes(w.name));
}

const formatCounts = (counts: Readonly<Record<string, number>>): string =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'none';

async function measure(workload: Workload): Promise<boolean> {
  const plans = workload.plans();
  const stack = await startStackProcess(quotaFlags, {
    // One limit for every workload: the synthesized machines are cached by it, and a second synthesis costs minutes.
    CAIRN_MAX_STEPS: String(maxSteps),
    CAIRN_MAX_DEPTH: '256',
    CAIRN_CATALOG_FILE: catalogFile,
    // A run waiting its turn under the quotas must not meet its deadline first.
    CAIRN_RUN_DEADLINE_SECONDS: String(Math.ceil(timeoutMs / 1000) + 3600),
  });
  const api = apiOf(stack.url, stack.token);
  let stopped = false;
  try {
    const started = performance.now();
    const { runIds, refused, started: startedPlans } = await startRuns(api, plans, clientConcurrency);
    const stepCount = startedPlans.reduce((sum, index) => sum + (plans[index]?.steps.length ?? 0), 0);
    const startedAfter = (performance.now() - started) / 1000;
    const statuses = await waitForRuns(api, runIds, {
      concurrency: clientConcurrency,
      timeoutMs,
      onRound: (open) => process.stderr.write(`scale ${workload.name}: ${open} run(s) still going\n`),
    });
    const seconds = (performance.now() - started) / 1000;
    const ends: Record<string, number> = {};
    for (const runId of runIds) addCounts(ends, { [statuses.get(runId) ?? 'unknown']: 1 });
    const steps: Record<string, number> = {};
    for (const counts of await Promise.all(runIds.map((runId) => stepStatuses(api, runId)))) addCounts(steps, counts);
    const peak = stack.peakRssMb();
    const throttles = await stack.stop();
    stopped = true;
    const succeeded = steps.succeeded ?? 0;
    console.log(`scale ${workload.name}: ${workload.describe}; quotas ${quotaFlags.join(' ') || 'off'}`);
    console.log(
      `  runs: ${runIds.length} started in ${startedAfter.toFixed(1)} s${Object.keys(refused).length > 0 ? `, POST /runs refused: ${formatCounts(refused)}` : ''}; ended: ${formatCounts(ends)}`,
    );
    console.log(`  steps: ${stepCount} in the runs started; ${formatCounts(steps)}`);
    console.log(`  time: ${seconds.toFixed(1)} s; ${(succeeded / seconds).toFixed(1)} steps succeeded/s`);
    console.log(`  throttles absorbed: ${formatCounts(throttles)}`);
    console.log(`  peak RSS of npm start: ${peak} MB`);
    return runIds.length === plans.length && succeeded === stepCount && (ends.complete ?? 0) === plans.length;
  } finally {
    if (!stopped) await stack.stop().catch(() => ({}));
  }
}

const chosen = workloads();
const maxSteps = Math.max(200, ...chosen.map((workload) => workload.maxSteps));
let ok = true;
for (const workload of chosen) ok = (await measure(workload)) && ok;
process.exitCode = ok ? 0 : 1;
