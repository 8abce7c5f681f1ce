/**
 * `npm run bench:engine`: the embedded runtime (conformance pack) driven through its HTTP API.
 * - coarse-dag: 200 random steps sleeping 100–600 ms; fine-layered, fine-random, fine-forkjoin, fine-chain: DAGs of
 *   10–100 ms sleep steps. Each reports makespan (POST /runs → RunFinished) / critical path of the slept durations.
 * - zero-chain, zero-dag: zero-work steps, orchestration overhead per step.
 * - throughput: 50 concurrent 20-step zero-work runs, steps per second.
 * - step-units: what one tool step costs in AWS units (state transitions, Lambda invocations, DynamoDB writes and
 *   reads), apart from the run overhead; the other workloads print whole-run averages per step.
 * Everything printed is measured in this one run. BENCH_ONLY=name,name runs a subset; BENCH_SEED (default 7),
 * BENCH_STEPS (coarse-dag, default 200) and BENCH_CHAIN (zero-chain, default 60) change the workloads.
 */
import { availableParallelism, loadavg } from 'node:os';
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

function selected() {
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only.filter((name) => !WORKLOADS.some((w) => w.name === name));
  if (unknown.length > 0)
    throw new Error(
      `BENCH_ONLY: no workload ${unknown.join(', ')} (known: ${WORKLOADS.map((w) => w.name).join(', ')})`,
    );
  return only.length === 0 ? WORKLOADS : WORKLOADS.filter((w) => only.includes(w.name));
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
    // Warm-up: the first executions pay for module loading and ASL validation.
    const rnd = random(1);
    await driver.run(sleepSteps(stack, layered(3, 4, rnd), T.sleep, rnd, 10, 30), 'bench warm-up');
    console.log(`engine bench, seed ${SEED}, ${workloads.map((w) => w.name).join(', ')}; ${load()}`);
    console.log(
      'per step: st state transitions (both machines), λ Lambda invocations, w DynamoDB writes, r DynamoDB read requests (items read)',
    );
    const ctx = { stack, driver, seed: SEED, coarseSteps: STEPS, chainSteps: CHAIN };
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
