/**
 * `npm run bench:engine`: the embedded runtime on random DAGs.
 * 1. 200 steps with simulated durations: run time / critical-path time (no wave barrier means close to 1).
 * 2. Zero-work steps in a chain: orchestration overhead per step.
 * 3. What one step costs in AWS units: state transitions, Lambda invocations, DynamoDB writes and reads.
 * Everything is measured in this one run; the numbers are ratios and per-step counts, not absolute promises.
 */
import { type LocalStack, startLocalStack } from '../infra/local/boot.ts';
import { CONFORMANCE_TARGETS as T } from '../shared/capabilities/conformance.ts';
import { buildGraph, criticalPath } from '../shared/plan/graph.ts';
import type { PlanStep } from '../shared/plan/schema.ts';

const STEPS = Number(process.env.BENCH_STEPS ?? 200);
const CHAIN = Number(process.env.BENCH_CHAIN ?? 60);
const SEED = Number(process.env.BENCH_SEED ?? 7);

/** Deterministic PRNG (mulberry32), so two runs bench the same DAG. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function contractStep(stack: LocalStack, id: string, target: string, fields: Partial<PlanStep>): PlanStep {
  const capability = stack.catalog.get(target);
  if (!capability) throw new Error(`no ${target}`);
  return {
    id,
    title: id,
    target,
    dependsOn: [],
    inputSchema: capability.inputSchema,
    outputSchema: capability.outputSchema,
    ...fields,
  };
}

/** A layered random DAG: each step depends on up to 3 of the 20 steps before it. */
function randomDag(stack: LocalStack, n: number, rnd: () => number): PlanStep[] {
  const steps: PlanStep[] = [];
  for (let i = 0; i < n; i++) {
    const deps = new Set<string>();
    const fanIn = i === 0 ? 0 : Math.floor(rnd() * 4);
    for (let k = 0; k < fanIn; k++) deps.add(`s${Math.max(0, i - 1 - Math.floor(rnd() * 20))}`);
    const ms = 100 + Math.floor(rnd() * 500);
    steps.push(
      contractStep(stack, `s${i}`, T.sleep, {
        dependsOn: [...deps],
        input: { ms },
        estimatedDurationSeconds: ms / 1000,
      }),
    );
  }
  return steps;
}

/** Starts a run and waits for its RunFinished event on the bus (no polling: the bench measures the engine alone). */
async function runToEnd(stack: LocalStack, steps: PlanStep[], objective: string) {
  const finished = new Map<string, () => void>();
  const early = new Set<string>();
  const unsubscribe = stack.bus.subscribe({ 'detail-type': ['RunFinished'] }, (event) => {
    const runId = String(event.detail.runId);
    const done = finished.get(runId);
    if (done) done();
    else early.add(runId);
  });
  try {
    const t0 = performance.now();
    const runId = await stack.startRun({ plan: { schemaVersion: 1, revision: 1, objective, steps } });
    if (!early.has(runId)) await new Promise<void>((resolve) => finished.set(runId, resolve));
    const wall = performance.now() - t0;
    // Counted before the bench's own read of the result.
    const stats = stack.stats();
    const { json } = await stack.request('GET', `/runs/${runId}`);
    const run = json as { status: string; steps: { startedAt: string | null; finishedAt: string | null }[] };
    const starts = run.steps.map((s) => Date.parse(s.startedAt ?? '')).filter(Number.isFinite);
    const ends = run.steps.map((s) => Date.parse(s.finishedAt ?? '')).filter(Number.isFinite);
    return { runId, status: run.status, wallMs: wall, execMs: Math.max(...ends) - Math.min(...starts), stats };
  } finally {
    unsubscribe();
  }
}

const diff = (a: ReturnType<LocalStack['stats']>, b: ReturnType<LocalStack['stats']>) => ({
  stateTransitions: b.stateTransitions - a.stateTransitions,
  lambda:
    Object.values(b.lambdaInvocations).reduce((x, y) => x + y, 0) -
    Object.values(a.lambdaInvocations).reduce((x, y) => x + y, 0),
  writes: b.dynamoWrites - a.dynamoWrites,
  reads: b.dynamoReads - a.dynamoReads,
  readItems: b.dynamoReadItems - a.dynamoReadItems,
});

const fmt = (n: number, d = 2) => n.toFixed(d);

async function main() {
  const stack = await startLocalStack({
    conformance: true,
    instrument: true,
    backoffMs: 5,
    demoDelayMs: 0,
    limits: { maxSteps: Math.max(STEPS, CHAIN) + 10, maxDepth: Math.max(STEPS, CHAIN) + 10 },
  });
  try {
    // Warm-up: the first executions pay for module loading and ASL validation.
    await runToEnd(stack, randomDag(stack, 10, random(1)), 'warm-up');

    const dag = randomDag(stack, STEPS, random(SEED));
    const cp = criticalPath(buildGraph(dag));
    const before = stack.stats();
    const result = await runToEnd(stack, dag, `bench: ${STEPS}-step random DAG`);
    const cost = diff(before, result.stats);
    const cpMs = cp.seconds * 1000;
    console.log(
      `random DAG: ${STEPS} steps, critical path ${cp.steps.length} steps = ${fmt(cpMs, 0)} ms of simulated work`,
    );
    console.log(
      `  run ${result.status}: wall ${fmt(result.wallMs, 0)} ms (POST /runs → terminal), steps ${fmt(result.execMs, 0)} ms (first start → last finish)`,
    );
    console.log(
      `  ratio run time / critical path: ${fmt(result.wallMs / cpMs, 3)} (wall), ${fmt(result.execMs / cpMs, 3)} (steps)   target ≤ 1.10`,
    );
    console.log(
      `  per step: ${fmt(cost.stateTransitions / STEPS)} state transitions, ${fmt(cost.lambda / STEPS)} Lambda invocations, ` +
        `${fmt(cost.writes / STEPS)} DynamoDB writes, ${fmt(cost.reads / STEPS)} DynamoDB reads ` +
        `(${fmt(cost.readItems / STEPS)} items; run overhead included)`,
    );

    const chain = Array.from({ length: CHAIN }, (_, i) =>
      contractStep(stack, `z${i}`, T.echo, { dependsOn: i === 0 ? [] : [`z${i - 1}`], input: { value: i } }),
    );
    const beforeChain = stack.stats();
    const zero = await runToEnd(stack, chain, `bench: ${CHAIN}-step chain of zero-work steps`);
    const chainCost = diff(beforeChain, zero.stats);
    console.log(`zero-work chain: ${CHAIN} steps in ${fmt(zero.wallMs, 0)} ms (${zero.status})`);
    console.log(
      `  orchestration overhead per step: ${fmt(zero.execMs / CHAIN, 1)} ms (steps), ${fmt(zero.wallMs / CHAIN, 1)} ms (wall)   target ≤ 15 ms`,
    );
    console.log(
      `  per step: ${fmt(chainCost.stateTransitions / CHAIN)} state transitions, ${fmt(chainCost.lambda / CHAIN)} Lambda invocations, ` +
        `${fmt(chainCost.writes / CHAIN)} DynamoDB writes, ${fmt(chainCost.reads / CHAIN)} DynamoDB reads ` +
        `(${fmt(chainCost.readItems / CHAIN)} items)`,
    );
    console.log(`  Lambda invocations by function (whole bench): ${JSON.stringify(stack.stats().lambdaInvocations)}`);
  } finally {
    await stack.close();
  }
}

await main();
