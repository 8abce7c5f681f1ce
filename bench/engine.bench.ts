/**
 * `npm run bench:engine`: the embedded runtime (conformance pack) driven through its HTTP API.
 * - coarse-dag: 200 random steps sleeping 100–600 ms; fine-layered, fine-random, fine-forkjoin, fine-chain: DAGs of
 *   10–100 ms sleep steps. Each reports makespan (POST /runs → RunFinished) / critical path of the slept durations.
 * - zero-chain, zero-dag: zero-work steps, orchestration overhead per step.
 * - throughput: 50 concurrent 20-step zero-work runs, steps per second.
 * - step-units: what one tool step costs in AWS units (state transitions, Lambda invocations, DynamoDB writes and
 *   reads), apart from the run overhead; the other workloads print whole-run averages per step.
 * - watched-dag: the coarse DAG with and without a 10 Hz watcher on the run's event feed, alternately: the ratio of
 *   their makespans (BENCH_WATCH_PAIRS pairs, default 3).
 * Everything printed is measured in this one run. `--only name,name` (or BENCH_ONLY=name,name) runs a subset;
 * BENCH_SEED (default 7), BENCH_STEPS (coarse-dag, default 200) and BENCH_CHAIN (zero-chain, default 60) change the
 * workloads. `--cpu-prof FILE` writes a V8 CPU profile of the workloads alone (not the boot nor the warm-up);
 * `node --import tsx bench/cpuprofile-summary.ts FILE` summarises it by self and inclusive time per file.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startLocalStack } from '../infra/local/boot.ts';
import { CONFORMANCE_TARGETS as T } from '../shared/capabilities/conformance.ts';
import { layered, random, sleepSteps } from './engine/dags.ts';
import { createDriver } from './engine/drive.ts';
import { passes, type Row, table } from './engine/report.ts';
import { WORKLOADS } from './engine/workloads.ts';

const SEED = Number(process.env.BENCH_SEED ?? 7);
const STEPS = Number(process.env.BENCH_STEPS ?? 200);
const CHAIN = Number(process.env.BENCH_CHAIN ?? 60);
const RUN_TIMEOUT_MS = 120_000;

/** The machine's load, so a reader can tell a busy machine from a slow engine. */
const load = (): string =>
  `load average ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} on ${availableParallelism()} cores`;

const { values: args } = parseArgs({
  options: { only: { type: 'string' }, 'cpu-prof': { type: 'string' } },
});

function selected() {
  const only = (args.only ?? process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only.filter((name) => !WORKLOADS.some((w) => w.name === name));
  if (unknown.length > 0)
    throw new Error(`--only: no workload ${unknown.join(', ')} (known: ${WORKLOADS.map((w) => w.name).join(', ')})`);
  return only.length === 0 ? WORKLOADS : WORKLOADS.filter((w) => only.includes(w.name));
}

/** Starts the V8 profiler in this process; the answer stops it and writes the profile to `file`. */
async function startProfile(file: string | undefined): Promise<(() => Promise<void>) | undefined> {
  if (file === undefined) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
    console.log(`cpu profile of the workloads: ${file}`);
  };
}

async function main() {
  const workloads = selected();
  const stack = await startLocalStack({
    conformance: true,
    instrument: true,
    backoffMs: 5,
    demoDelayMs: 0,
    limits: { maxSteps: 2000, maxDepth: 2000 },
  });
  const driver = createDriver(stack, { timeoutMs: RUN_TIMEOUT_MS });
  const rows: Row[] = [];
  const failures: string[] = [];
  try {
    // Warm-up: the first executions pay for module loading and ASL validation, and the first body of 16 KB or more
    // for building and starting the plan-check workers (a few seconds on a busy machine): the warm-up plan is that
    // large, so that no workload (with --only, whichever comes first) pays for it.
    const rnd = random(1);
    await driver.run(sleepSteps(stack, layered(5, 10, rnd), T.sleep, rnd, 1, 5), 'bench warm-up');
    console.log(`engine bench, seed ${SEED}, ${workloads.map((w) => w.name).join(', ')}; ${load()}`);
    console.log(
      'per step: st state transitions (both machines), λ Lambda invocations, w DynamoDB writes, r DynamoDB read requests (items read)',
    );
    const ctx = { stack, driver, seed: SEED, coarseSteps: STEPS, chainSteps: CHAIN };
    const profiler = await startProfile(args['cpu-prof']);
    for (const workload of workloads) {
      try {
        rows.push(...(await workload.run(ctx)));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        failures.push(workload.name);
        process.exitCode = 1;
        console.log(`${workload.name}: FAILED: ${message}`);
      }
    }
    await profiler?.();
    console.log(`\n${table(rows)}`);
    const missed = rows.filter((row) => !passes(row)).length;
    const failed = failures.length > 0 ? `, failed: ${failures.join(', ')}` : '';
    console.log(`\n${rows.length - missed} pass, ${missed} miss${failed}; ${load()}`);
  } finally {
    driver.close();
    await stack.close();
  }
}

await main();
