/**
 * The `watched-dag` workload of `npm run bench:engine`: what a watcher costs the engine. A watcher is a client that
 * wakes up to 10 times a second, as a console following a run does: each wake waits on the run's event feed (a long
 * poll, answered at once while events come) and reads the run's head conditionally (`?limit=1` with its ETag). The
 * same random 200-step DAG runs with and without one, alternately (the order swapped every pair, so a machine
 * growing busier does not favour one side); the workload prints the mean makespan / critical path of each and their
 * ratio (target ≤ 1.05).
 */
import type { LocalStack } from '../../infra/local/boot.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { buildGraph, criticalPath } from '../../shared/plan/graph.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import { coarseDag, random } from './dags.ts';
import type { BenchContext, RunResult, Workload } from './drive.ts';
import { fmt, type Row } from './report.ts';

const WATCH_HZ = 10;
/** Pairs of runs (one watched, one not); BENCH_WATCH_PAIRS changes it. */
const PAIRS = Number(process.env.BENCH_WATCH_PAIRS ?? 3);
const FOLLOW_WAIT_S = 15;

interface Watcher {
  /** Stops the watcher; resolves with the requests it made. */
  stop(): Promise<number>;
}

/** A client following `runId` at up to WATCH_HZ wakes a second, over HTTP like any other. */
function watch(stack: LocalStack, runId: string): Watcher {
  const headers = { authorization: `Bearer ${stack.token}` };
  const abort = new AbortController();
  let requests = 0;
  const loop = (async () => {
    let after: string | undefined;
    let etag = '';
    while (!abort.signal.aborted) {
      const woke = performance.now();
      const query = `follow=1&wait=${FOLLOW_WAIT_S}${after === undefined ? '' : `&after=${after}`}`;
      const feed = await fetch(`${stack.url}/runs/${runId}/events?${query}`, { headers, signal: abort.signal });
      requests += 1;
      const page = (await feed.json()) as { events: { seq: string }[]; finished?: boolean };
      after = page.events.at(-1)?.seq ?? after;
      const head = await fetch(`${stack.url}/runs/${runId}?limit=1`, {
        headers: { ...headers, 'if-none-match': etag },
        signal: abort.signal,
      });
      requests += 1;
      etag = head.headers.get('etag') ?? etag;
      await head.arrayBuffer();
      if (page.finished === true) return;
      const rest = 1000 / WATCH_HZ - (performance.now() - woke);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    }
  })().catch((error: unknown) => {
    if (!abort.signal.aborted) throw error;
  });
  return {
    async stop() {
      abort.abort();
      await loop;
      return requests;
    },
  };
}

const sleptMs = (output: unknown): number | undefined => {
  const value = (output as { sleptMs?: unknown } | null)?.sleptMs;
  return typeof value === 'number' ? value : undefined;
};

/** Makespan (POST → RunFinished) over the critical path of what the steps actually slept. */
function makespanRatio(steps: readonly PlanStep[], result: RunResult): number {
  const slept = new Map(result.steps.map((s) => [s.id, sleptMs(s.output)]));
  const estimate = new Map(steps.map((s) => [s.id, (s.estimatedDurationSeconds ?? 0) * 1000]));
  const cp = criticalPath(buildGraph(steps), (id) => (slept.get(id) ?? estimate.get(id) ?? 0) / 1000);
  return result.wallMs / (cp.seconds * 1000);
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

async function runOnce(ctx: BenchContext, steps: PlanStep[], watched: boolean, label: string) {
  let watcher: Watcher | undefined;
  const result = await ctx.driver.run(steps, `bench watched-dag: ${label}`, {
    ...(watched ? { onPosted: (runId: string) => (watcher = watch(ctx.stack, runId)) } : {}),
  });
  const requests = (await watcher?.stop()) ?? 0;
  if (result.status !== 'complete') throw new Error(`run ${result.runId} ended ${result.status}`);
  return { ratio: makespanRatio(steps, result), requests, wallMs: result.wallMs };
}

export const watchedDag: Workload = {
  name: 'watched-dag',
  async run(ctx) {
    const steps = coarseDag(ctx.stack, ctx.coarseSteps, T.sleep, random(ctx.seed));
    const alone: number[] = [];
    const watched: number[] = [];
    let requests = 0;
    let watchedMs = 0;
    for (let pair = 0; pair < PAIRS; pair++) {
      const order = pair % 2 === 0 ? [false, true] : [true, false];
      for (const withWatcher of order) {
        const once = await runOnce(ctx, steps, withWatcher, `pair ${pair + 1}, ${withWatcher ? 'watched' : 'alone'}`);
        (withWatcher ? watched : alone).push(once.ratio);
        requests += once.requests;
        if (withWatcher) watchedMs += once.wallMs;
      }
    }
    const ratio = mean(watched) / mean(alone);
    console.log(
      `watched-dag: ${ctx.coarseSteps} random steps sleeping 100–600 ms (seed ${ctx.seed}), ${PAIRS} pairs alternated: ` +
        `makespan/cp alone ${alone.map((r) => fmt(r, 3)).join(', ')} (mean ${fmt(mean(alone), 3)}), ` +
        `with a ${WATCH_HZ} Hz watcher ${watched.map((r) => fmt(r, 3)).join(', ')} (mean ${fmt(mean(watched), 3)}); ` +
        `watched/alone ${fmt(ratio, 3)} (target ≤ 1.05); the watcher made ${fmt(requests / (watchedMs / 1000), 1)} requests/s`,
    );
    return [
      {
        workload: 'watched-dag',
        metric: 'makespan watched / alone',
        value: ratio,
        unit: 'ratio',
        target: { op: '≤', value: 1.05 },
      } satisfies Row,
    ];
  },
};
