/**
 * Simulating seeds. One seed: its world runs on the virtual clock until nothing is left to happen (or its horizon
 * passes), then every check runs; the same seed, spec and runs give the same interleaving, faults, events and trace
 * hash every time. Many seeds: spread over worker threads (each world is single-threaded and independent), worker k
 * taking every k-th seed; each seed's report comes back as plain data, and the report's order is the seeds' order
 * whatever order the workers finish in. This module is also the workers' entry.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { checkWorld, type SimViolation } from './checks/index.ts';
import { parseSimFaults, type SimFaultRule } from './faults.ts';
import type { SimRun } from './recorder.ts';
import type { LoopEnd } from './scheduler.ts';
import { buildWorld, EPOCH } from './world.ts';

export interface SeedOptions {
  readonly seed: number;
  readonly runs: number;
  readonly faults: readonly SimFaultRule[];
  readonly trace?: boolean;
  /** Keep each run's committed batches as lines to print. */
  readonly events?: boolean;
}

export interface SeedResult {
  readonly seed: number;
  readonly runs: number;
  readonly violations: readonly SimViolation[];
  readonly end: LoopEnd;
  readonly tasks: number;
  /** Virtual time the world took. */
  readonly virtualMs: number;
  readonly batches: number;
  /** The sha256 of the committed events, in commit order (with `trace`). */
  readonly trace?: string | undefined;
  /** How often each fault fired. */
  readonly fired: ReadonlyMap<string, number>;
  /** Each run's final status, for a reader. */
  readonly statuses: readonly string[];
  /** Each run's committed batches, one line each (with `events`). */
  readonly log: readonly string[];
  /** How often each path was taken (events, answers, taken versions, faults). */
  readonly tallies: ReadonlyMap<string, number>;
}

/** Past this much virtual time a world is not quiet: something keeps it busy for ever. */
export const HORIZON_MS = 7 * 24 * 3600 * 1000;
const MAX_TASKS = 2_000_000;

export async function simulateSeed(options: SeedOptions): Promise<SeedResult> {
  const world = buildWorld({ ...options, trace: options.trace === true });
  const end = await world.sched.run(EPOCH + HORIZON_MS, MAX_TASKS);
  const violations = await checkWorld(world, end, HORIZON_MS);
  const runs = [...world.recorder.runs.values()];
  return {
    seed: options.seed,
    runs: runs.length,
    violations,
    end,
    tasks: world.sched.steps,
    virtualMs: world.sched.now - EPOCH,
    batches: runs.reduce((n, r) => n + r.batches.length, 0),
    trace: world.recorder.traceHash(),
    fired: world.faults.fired,
    log: options.events === true ? runs.flatMap(logOf) : [],
    tallies: world.recorder.tallies,
    statuses: runs.map(
      (r) => `${r.runId} ${r.replica.run.status}${r.replica.run.terminal ? ` (${r.replica.run.terminal.reason})` : ''}`,
    ),
  };
}

/**
 * A run's committed batches, a line each: its version, time and events (`type:stepId#generation`); then the answers
 * people and services were given, each after the version it came on (what it was decided on or before).
 */
function logOf(run: SimRun): string[] {
  const lines = run.batches.map((b) => ({
    version: b.version,
    text: `${run.runId} v${b.version} ${b.at.slice(11)} ${b.events.map((e) => ('generation' in e ? `${e.type}:${e.stepId}#${e.generation}` : e.type)).join(' ')}`,
  }));
  for (const a of run.answers) {
    const reply = a.reply === undefined ? 'no answer' : a.reply.ok ? 'OK' : `${a.reply.status} ${a.reply.code}`;
    const at = new Date(a.answeredAt).toISOString().slice(11);
    lines.push({
      version: a.version + 0.5,
      text: `${run.runId}   answer after v${a.version} ${at} ${a.command.kind}: ${reply}`,
    });
  }
  return lines.sort((x, y) => x.version - y.version).map((l) => l.text);
}

/** What one seed reports back (structured-clone safe, to cross from a worker). */
export interface SeedReport {
  readonly seed: number;
  readonly runs: number;
  readonly violations: readonly SimViolation[];
  readonly trace?: string | undefined;
  readonly statuses: readonly string[];
  readonly log: readonly string[];
  readonly fired: readonly (readonly [string, number])[];
  readonly tallies: readonly (readonly [string, number])[];
  readonly batches: number;
  readonly tasks: number;
  readonly virtualMs: number;
  readonly end: string;
}

/** What to simulate of each seed (the fault spec as text: it crosses to the workers). */
export interface SeedJob {
  readonly spec: string;
  readonly runsPerSeed: number;
  readonly trace: boolean;
  readonly events: boolean;
}

interface WorkerJob extends SeedJob {
  readonly kind: 'cairn-sim';
  readonly seeds: readonly number[];
}

async function reportSeed(seed: number, job: SeedJob): Promise<SeedReport> {
  const faults = parseSimFaults(job.spec);
  const result = await simulateSeed({ seed, runs: job.runsPerSeed, faults, trace: job.trace, events: job.events });
  return { ...result, fired: [...result.fired], tallies: [...result.tallies] };
}

/**
 * A worker thread does not inherit the main thread's TypeScript loader (`--import tsx` registers it for that thread
 * only): its bootstrap registers it, then loads this module, which sees its job and runs it.
 */
const BOOTSTRAP = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;

/** Every seed's report, in the seeds' order; over `workers` threads when there are enough seeds to share. */
export async function runSeeds(seeds: readonly number[], job: SeedJob, workers: number): Promise<SeedReport[]> {
  const threads = Math.min(workers, Math.ceil(seeds.length / 50));
  if (threads <= 1) {
    const reports: SeedReport[] = [];
    for (const seed of seeds) reports.push(await reportSeed(seed, job));
    return reports;
  }
  const shares = Array.from({ length: threads }, (_, k) => seeds.filter((_, i) => i % threads === k));
  const parts = await Promise.all(
    shares.map(
      (share) =>
        new Promise<SeedReport[]>((resolve, reject) => {
          const workerJob: WorkerJob = { ...job, kind: 'cairn-sim', seeds: share };
          const worker = new Worker(BOOTSTRAP, { eval: true, workerData: workerJob });
          const reports: SeedReport[] = [];
          worker.on('message', (report: SeedReport) => reports.push(report));
          worker.on('error', reject);
          worker.on('exit', (code) =>
            code === 0 ? resolve(reports) : reject(new Error(`a simulation worker exited with ${code}`)),
          );
        }),
    ),
  );
  return parts.flat().sort((a, b) => a.seed - b.seed);
}

// Loaded in a worker thread with a job: simulate its share of the seeds, one after the other, and report each.
if (!isMainThread && (workerData as Partial<WorkerJob> | null)?.kind === 'cairn-sim') {
  const job = workerData as WorkerJob;
  for (const seed of job.seeds) parentPort?.postMessage(await reportSeed(seed, job));
}
