/**
 * The timed workloads of `npm run bench:engine` (step-units is in units.ts), each printing one line and returning
 * its measures.
 * Sleep steps use tool:conformance.sleep {ms}; zero-work steps use tool:conformance.echo {value}, which returns its
 * input without waiting.
 */
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { buildGraph, criticalPath, depth } from '../../shared/plan/graph.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import {
  chain,
  coarseDag,
  echoSteps,
  forkJoin,
  layered,
  type Node,
  random,
  randomParents,
  sleepSteps,
} from './dags.ts';
import type { BenchContext, RunResult, Workload } from './drive.ts';
import { fmt, perStep, type Row } from './report.ts';
import { stepUnits } from './units.ts';
import { watchedDag } from './watcher.ts';

const brokenUnless = (result: { status: string }): { broken?: string } =>
  result.status === 'complete' ? {} : { broken: `run ${result.status}` };

const sleptMs = (output: unknown): number | undefined => {
  const value = (output as { sleptMs?: unknown } | null)?.sleptMs;
  return typeof value === 'number' ? value : undefined;
};

/** Critical path by the plan's estimates and by what each step actually slept (the estimate where unknown). */
function criticalPaths(steps: readonly PlanStep[], result: RunResult) {
  const graph = buildGraph(steps);
  const estimate = new Map(steps.map((s) => [s.id, (s.estimatedDurationSeconds ?? 0) * 1000]));
  const slept = new Map(result.steps.map((s) => [s.id, sleptMs(s.output)]));
  const planned = criticalPath(graph);
  const actual = criticalPath(graph, (id) => (slept.get(id) ?? estimate.get(id) ?? 0) / 1000);
  return { planned: { steps: planned.steps.length, ms: planned.seconds * 1000 }, actual: actual.seconds * 1000 };
}

/** A DAG of sleep steps: makespan (POST → RunFinished) over the critical path of the durations actually slept. */
async function makespan(
  ctx: BenchContext,
  name: string,
  label: string,
  steps: PlanStep[],
  target: number,
): Promise<Row[]> {
  const result = await ctx.driver.run(steps, `bench ${name}: ${label}`);
  const cp = criticalPaths(steps, result);
  const ratio = result.wallMs / cp.actual;
  console.log(
    `${name}: ${label} (seed ${ctx.seed}), ${result.status}: wall ${fmt(result.wallMs, 0)} ms, steps ${fmt(result.spanMs, 0)} ms ` +
      `(POST → first start ${fmt(result.startLagMs, 0)} ms, last finish → RunFinished ${fmt(result.endLagMs, 0)} ms); ` +
      `critical path ${cp.planned.steps} steps, ${fmt(cp.planned.ms, 0)} ms planned, ${fmt(cp.actual, 0)} ms slept; ` +
      `wall/cp ${fmt(ratio, 3)}, steps/cp ${fmt(result.spanMs / cp.actual, 3)} (target ≤ ${target}); ` +
      `per step ${perStep(result.units, steps.length)}`,
  );
  return [
    {
      workload: name,
      metric: 'wall / critical path',
      value: ratio,
      unit: 'ratio',
      target: { op: '≤', value: target },
      ...brokenUnless(result),
    },
  ];
}

const sleeps = (ctx: BenchContext, nodes: Node[], rnd: () => number) =>
  sleepSteps(ctx.stack, nodes, T.sleep, rnd, 10, 100);
const coarseDagWorkload: Workload = {
  name: 'coarse-dag',
  run: (ctx) =>
    makespan(
      ctx,
      'coarse-dag',
      `${ctx.coarseSteps} random steps sleeping 100–600 ms`,
      coarseDag(ctx.stack, ctx.coarseSteps, T.sleep, random(ctx.seed)),
      1.1,
    ),
};

const zeroChain: Workload = {
  name: 'zero-chain',
  async run(ctx) {
    const n = ctx.chainSteps;
    const result = await ctx.driver.run(echoSteps(ctx.stack, chain(n, 'z')), `bench zero-chain: ${n} steps`);
    const perStepMs = result.wallMs / n;
    console.log(
      `zero-chain: ${n}-step chain of zero-work steps, ${result.status}: wall ${fmt(result.wallMs, 0)} ms = ${fmt(perStepMs, 1)} ms/step, ` +
        `steps ${fmt(result.spanMs, 0)} ms = ${fmt(result.spanMs / n, 1)} ms/step (target ≤ 15); per step ${perStep(result.units, n)}`,
    );
    return [
      {
        workload: 'zero-chain',
        metric: 'wall / steps',
        value: perStepMs,
        unit: 'ms/step',
        target: { op: '≤', value: 15 },
        ...brokenUnless(result),
      },
    ];
  },
};

const fineLayered: Workload = {
  name: 'fine-layered',
  run: (ctx) => {
    const rnd = random(ctx.seed);
    return makespan(
      ctx,
      'fine-layered',
      '10 layers × 20 steps sleeping 10–100 ms, 1–3 parents in the layer before',
      sleeps(ctx, layered(10, 20, rnd), rnd),
      1.5,
    );
  },
};

const fineRandom: Workload = {
  name: 'fine-random',
  run: (ctx) => {
    const rnd = random(ctx.seed);
    return makespan(
      ctx,
      'fine-random',
      '200 steps sleeping 10–100 ms, 0–3 parents among earlier steps',
      sleeps(ctx, randomParents(200, 3, rnd), rnd),
      1.5,
    );
  },
};

const fineForkJoin: Workload = {
  name: 'fine-forkjoin',
  run: (ctx) => {
    const rnd = random(ctx.seed);
    const nodes = forkJoin(8, 5, 7, rnd);
    return makespan(
      ctx,
      'fine-forkjoin',
      `fork, 8 chains of 5–7, join (${nodes.length} steps) sleeping 10–100 ms`,
      sleeps(ctx, nodes, rnd),
      1.5,
    );
  },
};

const fineChain: Workload = {
  name: 'fine-chain',
  run: (ctx) =>
    makespan(ctx, 'fine-chain', '50-step chain sleeping 10–100 ms', sleeps(ctx, chain(50), random(ctx.seed)), 1.15),
};

const zeroDag: Workload = {
  name: 'zero-dag',
  async run(ctx) {
    const steps = echoSteps(ctx.stack, layered(10, 20, random(ctx.seed)));
    const result = await ctx.driver.run(steps, 'bench zero-dag: 10 layers × 20 zero-work steps');
    const levels = depth(buildGraph(steps));
    const perStepMs = result.wallMs / steps.length;
    const perLevelMs = result.spanMs / levels;
    console.log(
      `zero-dag: 10 layers × 20 zero-work steps (seed ${ctx.seed}), ${result.status}: wall ${fmt(result.wallMs, 0)} ms / ${steps.length} steps = ${fmt(perStepMs, 1)} ms/step; ` +
        `steps ${fmt(result.spanMs, 0)} ms / critical path ${levels} steps = ${fmt(perLevelMs, 1)} ms/step (target ≤ 5); per step ${perStep(result.units, steps.length)}`,
    );
    const broken = brokenUnless(result);
    return [
      {
        workload: 'zero-dag',
        metric: 'wall / steps',
        value: perStepMs,
        unit: 'ms/step',
        target: { op: '≤', value: 5 },
        ...broken,
      },
      {
        workload: 'zero-dag',
        metric: 'steps span / critical path steps',
        value: perLevelMs,
        unit: 'ms/step',
        target: { op: '≤', value: 5 },
        ...broken,
      },
    ];
  },
};

/**
 * zero-dag again, with every step's input an expression over `$objective` and its first parent's output: each claim
 * evaluates in the expression sandbox's worker processes. Against zero-dag, the sandbox's cost per step.
 */
const zeroDagExpressions: Workload = {
  name: 'zero-dag-expressions',
  async run(ctx) {
    const steps = echoSteps(ctx.stack, layered(10, 20, random(ctx.seed))).map((step) => {
      const parent = step.dependsOn[0];
      const value = parent === undefined ? '{% $objective %}' : `{% [$objective, $outputs.${parent}.value] %}`;
      return { ...step, input: { value } };
    });
    const result = await ctx.driver.run(steps, 'bench zero-dag-expressions: 10 layers × 20 zero-work steps');
    const perStepMs = result.wallMs / steps.length;
    console.log(
      `zero-dag-expressions: 10 layers × 20 zero-work steps with input expressions (seed ${ctx.seed}), ${result.status}: wall ${fmt(result.wallMs, 0)} ms / ${steps.length} steps = ${fmt(perStepMs, 1)} ms/step; per step ${perStep(result.units, steps.length)}`,
    );
    return [
      {
        workload: 'zero-dag-expressions',
        metric: 'wall / steps',
        value: perStepMs,
        unit: 'ms/step',
        target: { op: '≤', value: 5 },
        ...brokenUnless(result),
      },
    ];
  },
};

const throughput: Workload = {
  name: 'throughput',
  async run(ctx) {
    const runs = 50;
    const plans = Array.from({ length: runs }, (_, i) => ({
      steps: echoSteps(ctx.stack, layered(5, 4, random(ctx.seed + i))),
      objective: `bench throughput: run ${i + 1} of ${runs}`,
    }));
    const total = plans.reduce((n, p) => n + p.steps.length, 0);
    const result = await ctx.driver.runMany(plans);
    const notComplete = result.runs.filter((r) => r.status !== 'complete');
    const rate = total / (result.wallMs / 1000);
    const slowest = Math.max(...result.runs.map((r) => r.wallMs));
    const fastest = Math.min(...result.runs.map((r) => r.wallMs));
    console.log(
      `throughput: ${runs} concurrent runs of 20 zero-work steps (5 layers × 4, seeds ${ctx.seed}–${ctx.seed + runs - 1}), ` +
        `${runs - notComplete.length}/${runs} complete: ${total} steps in ${fmt(result.wallMs, 0)} ms = ${fmt(rate, 0)} steps/s (target ≥ 200); ` +
        `runs ended ${fmt(fastest, 0)}–${fmt(slowest, 0)} ms after the first POST; per step ${perStep(result.units, total)}`,
    );
    return [
      {
        workload: 'throughput',
        metric: 'steps per second',
        value: rate,
        unit: 'steps/s',
        target: { op: '≥', value: 200 },
        ...(notComplete.length > 0 ? { broken: `${notComplete.length} runs not complete` } : {}),
      },
    ];
  },
};

export const WORKLOADS: readonly Workload[] = [
  coarseDagWorkload,
  zeroChain,
  fineLayered,
  fineRandom,
  fineForkJoin,
  fineChain,
  zeroDag,
  zeroDagExpressions,
  throughput,
  stepUnits,
  watchedDag,
];
