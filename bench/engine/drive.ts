/**
 * Drives runs as a client does: POST /runs over real HTTP (fetch to the stack's URL, bearer token), and GET
 * /runs/{id} at the end for the step timings. The end of a run is taken from the in-process bus's RunFinished
 * event (its arrival time is recorded in the subscriber), so waiting costs the engine nothing: no polling.
 * Costs (state transitions, Lambda invocations, DynamoDB calls) are the stack's counters before the POST and after
 * the stack has settled (every execution over, the bus drained), before the bench's own GET.
 */
import type { LocalStack, LocalStackStats } from '../../infra/local/boot.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import type { Row, Units } from './report.ts';

export function unitsBetween(
  a: LocalStackStats,
  b: LocalStackStats,
  cpu: NodeJS.CpuUsage = { user: 0, system: 0 },
): Units {
  const lambdaBy: Record<string, number> = {};
  for (const [name, count] of Object.entries(b.lambdaInvocations)) {
    const delta = count - (a.lambdaInvocations[name] ?? 0);
    if (delta !== 0) lambdaBy[name] = delta;
  }
  return {
    stateTransitions: b.stateTransitions - a.stateTransitions,
    lambda: Object.values(lambdaBy).reduce((x, y) => x + y, 0),
    lambdaBy,
    writes: b.dynamoWrites - a.dynamoWrites,
    auditWrites: b.auditWrites - a.auditWrites,
    reads: b.dynamoReads - a.dynamoReads,
    readItems: b.dynamoReadItems - a.dynamoReadItems,
    readBytes: b.dynamoReadBytes - a.dynamoReadBytes,
    planReads: b.planReads - a.planReads,
    sends: b.mailboxSends - a.mailboxSends,
    batches: b.mailboxBatches - a.mailboxBatches,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

export interface StepTiming {
  readonly id: string;
  readonly status: string;
  /** Epoch ms from the step record (NaN when absent). */
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly output: unknown;
}

export interface RunResult {
  readonly runId: string;
  /** The run's status as GET /runs/{id} reports it at the end. */
  readonly status: string;
  /** POST /runs sent → RunFinished received. */
  readonly wallMs: number;
  /** First step start → last step finish, from the step records. */
  readonly spanMs: number;
  /** POST /runs sent → first step start, and last step finish → RunFinished received (wall clock, ms precision). */
  readonly startLagMs: number;
  readonly endLagMs: number;
  readonly steps: readonly StepTiming[];
}

export interface Driver {
  /** Runs one plan alone: timing, its step records and what it cost. `onPosted` learns its id once it is created. */
  run(
    steps: PlanStep[],
    objective: string,
    options?: { readonly onPosted?: (runId: string) => void },
  ): Promise<RunResult & { units: Units }>;
  /** Starts every plan at once; wallMs is the first POST sent → the last RunFinished received. */
  runMany(
    plans: readonly { steps: PlanStep[]; objective: string }[],
  ): Promise<{ wallMs: number; runs: RunResult[]; units: Units }>;
  close(): void;
}

/** What every workload gets. */
export interface BenchContext {
  readonly stack: LocalStack;
  readonly driver: Driver;
  readonly seed: number;
  /** Steps of the coarse DAG and of the zero-work chain (BENCH_STEPS, BENCH_CHAIN). */
  readonly coarseSteps: number;
  readonly chainSteps: number;
}

export interface Workload {
  readonly name: string;
  run(ctx: BenchContext): Promise<Row[]>;
}

const time = (iso: string | null | undefined): number => (iso ? Date.parse(iso) : Number.NaN);

/** A page of GET /runs/{id}, as far as the bench reads it. */
interface RunPageView {
  readonly status: string;
  readonly steps: readonly {
    id: string;
    status: string;
    startedAt: string | null;
    finishedAt: string | null;
    output: unknown;
  }[];
  readonly nextCursor?: string;
}

export function createDriver(stack: LocalStack, options: { timeoutMs: number }): Driver {
  const finishedAt = new Map<string, number>();
  /** The same moment by the wall clock, to compare with the step records' timestamps. */
  const finishedEpoch = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const unsubscribe = stack.bus.subscribe({ 'detail-type': ['RunFinished'] }, (event) => {
    const runId = String(event.detail.runId);
    if (!finishedAt.has(runId)) {
      finishedAt.set(runId, performance.now());
      finishedEpoch.set(runId, Date.now());
    }
    waiters.get(runId)?.();
  });
  const headers = { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' };

  const post = async (steps: PlanStep[], objective: string): Promise<string> => {
    const response = await fetch(`${stack.url}/runs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ plan: { schemaVersion: 1, revision: 1, objective, steps } }),
    });
    const json = (await response.json()) as { runId?: string; error?: { message?: string } };
    if (response.status !== 202 || !json.runId)
      throw new Error(`POST /runs answered ${response.status}: ${json.error?.message ?? JSON.stringify(json)}`);
    return json.runId;
  };

  /** When RunFinished arrived for the run (performance.now()); rejects after the timeout. */
  const finished = (runId: string): Promise<number> => {
    const at = finishedAt.get(runId);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(runId);
        reject(new Error(`run ${runId}: no RunFinished within ${options.timeoutMs} ms`));
      }, options.timeoutMs);
      waiters.set(runId, () => {
        clearTimeout(timer);
        waiters.delete(runId);
        resolve(finishedAt.get(runId) ?? performance.now());
      });
    });
  };

  /** Until nothing moves: every execution over (or waiting for an outside answer) and every bus delivery done. */
  const settle = async () => {
    let timer: NodeJS.Timeout | undefined;
    const quiet = (async () => {
      await stack.executions.idle();
      await stack.bus.drain();
      await stack.executions.idle();
    })();
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the stack did not settle within ${options.timeoutMs} ms`)),
        options.timeoutMs,
      );
    });
    try {
      await Promise.race([quiet, late]);
    } finally {
      clearTimeout(timer);
    }
  };

  /** The run with every page of its steps. */
  const readRun = async (runId: string): Promise<RunPageView> => {
    let view: RunPageView | undefined;
    let cursor: string | undefined;
    do {
      const query = cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`;
      const response = await fetch(`${stack.url}/runs/${runId}${query}`, { headers });
      if (response.status !== 200) throw new Error(`GET /runs/${runId} answered ${response.status}`);
      const page = (await response.json()) as RunPageView;
      view = view === undefined ? page : { ...view, steps: [...view.steps, ...page.steps] };
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return view;
  };

  const read = async (runId: string, wallMs: number, postedEpoch: number): Promise<RunResult> => {
    const view = await readRun(runId);
    const steps = view.steps.map((s) => ({
      id: s.id,
      status: s.status,
      startedAt: time(s.startedAt),
      finishedAt: time(s.finishedAt),
      output: s.output,
    }));
    const starts = steps.map((s) => s.startedAt).filter(Number.isFinite);
    const ends = steps.map((s) => s.finishedAt).filter(Number.isFinite);
    const first = starts.length > 0 ? Math.min(...starts) : Number.NaN;
    const last = ends.length > 0 ? Math.max(...ends) : Number.NaN;
    const endLagMs = (finishedEpoch.get(runId) ?? Number.NaN) - last;
    return {
      runId,
      status: view.status,
      wallMs,
      spanMs: last - first,
      startLagMs: first - postedEpoch,
      endLagMs,
      steps,
    };
  };

  return {
    async run(steps, objective, options = {}) {
      await settle();
      const before = stack.stats();
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      const epoch = Date.now();
      const runId = await post(steps, objective);
      options.onPosted?.(runId);
      const wallMs = (await finished(runId)) - t0;
      await settle();
      const units = unitsBetween(before, stack.stats(), process.cpuUsage(cpu));
      return { ...(await read(runId, wallMs, epoch)), units };
    },
    async runMany(plans) {
      await settle();
      const before = stack.stats();
      const cpu = process.cpuUsage();
      const t0 = performance.now();
      const epoch = Date.now();
      const ids = await Promise.all(plans.map((p) => post(p.steps, p.objective)));
      const ends = await Promise.all(ids.map(finished));
      const wallMs = Math.max(...ends) - t0;
      await settle();
      const units = unitsBetween(before, stack.stats(), process.cpuUsage(cpu));
      const runs: RunResult[] = [];
      for (const runId of ids) runs.push(await read(runId, (finishedAt.get(runId) ?? Number.NaN) - t0, epoch));
      return { wallMs, runs, units };
    },
    close() {
      unsubscribe();
    },
  };
}
