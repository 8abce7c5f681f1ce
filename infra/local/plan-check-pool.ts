/**
 * The embedded server's PlanRequestChecks (shared/api/plan-requests.ts): a small pool of worker threads that decode
 * and validate large plan bodies, so the one event loop that answers `/health`, serves the API and drives every run
 * never spends a 1 MB plan's validation (a few hundred milliseconds each; a dozen at once held `/health` for
 * seconds, bench:hostile). A body under `inlineBelowBytes` is checked in place: it costs less than the trip. But
 * a burst of small bodies (fifty `POST /runs` at once) would be checked back to back in one turn of the loop, so
 * each in-place check first asks for a turn (./loop-turns.ts): once the loop's slice is spent it waits, in arrival
 * order with the store calls and invocations, until the loop has polled. Nothing is refused or answered otherwise:
 * on Lambda every request has its own invocation and no check waits behind another's, and here none starves
 * `/health` either.
 *
 * The pool is bounded: with every worker busy and `queue` jobs waiting, a further job is refused at once with 503
 * E_OVERLOADED and Retry-After, instead of piling up work (and memory) the server cannot get through. A worker that
 * dies (its heap limit) fails its job with 503 E_UNAVAILABLE and is replaced. Workers are unref'd: an idle pool
 * does not keep a process alive.
 *
 * Threads, not processes (compare the expression sandbox): a job's body is at most the API's 1 MB and is only
 * parsed and checked, never evaluated, so it cannot allocate without bound; a thread takes the body's bytes without
 * a copy and starts faster.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { bundledWorkerFile } from '../../shared/adapters/worker-bundle.ts';
import {
  inlinePlanRequestChecks,
  type PlanRequestChecks,
  type PlanRequestContext,
  type PlanRequestJob,
  type PlanRequestOutcome,
} from '../../shared/api/plan-requests.ts';
import { type LoopTurns, loopTurns } from './loop-turns.ts';
import type { PlanCheckWorkerData } from './plan-check-worker.ts';

export interface PlanCheckPoolOptions extends PlanRequestContext {
  /** Worker threads (at least 1); default: the cores but one, at most 4. */
  readonly workers?: number;
  /** Jobs that may wait for a worker before more are refused (503); default 32. */
  readonly queue?: number;
  /** Bodies smaller than this are checked inline; default 16 KiB. */
  readonly inlineBelowBytes?: number;
  /** Each worker's old-generation heap, in MB; default 256. */
  readonly heapMb?: number;
  /** The loop's time slices an in-place check waits its turn in; default: the process's one (tests). */
  readonly turns?: LoopTurns;
}

export interface PlanCheckPool extends PlanRequestChecks {
  /** Jobs running and waiting (for tests and stats). */
  load(): { running: number; waiting: number };
  close(): Promise<void>;
}

interface Job {
  readonly id: number;
  readonly job: PlanRequestJob;
  readonly resolve: (outcome: PlanRequestOutcome) => void;
  readonly reject: (error: Error) => void;
}

interface Slot {
  readonly worker: Worker;
  ready: boolean;
  job: Job | undefined;
  ended: boolean;
}

const WORKER = new URL('./plan-check-worker.ts', import.meta.url);
const RETRY_AFTER_SECONDS = 1;

const overloaded = (): PlanRequestOutcome => ({
  ok: false,
  refused: {
    status: 503,
    code: 'E_OVERLOADED',
    message: 'the server is checking as many plans as it can take; send the request again shortly',
    retryAfterSeconds: RETRY_AFTER_SECONDS,
  },
});

const workerDied = (why: string): PlanRequestOutcome => ({
  ok: false,
  refused: {
    status: 503,
    code: 'E_UNAVAILABLE',
    message: `the plan check ended its worker (${why}); send the request again`,
    retryAfterSeconds: RETRY_AFTER_SECONDS,
  },
});

/** The bytes as a buffer of their own, so the worker can take it without a copy. */
function ownBuffer(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
    ? bytes
    : bytes.slice();
}

export function createPlanCheckPool(options: PlanCheckPoolOptions): PlanCheckPool {
  const context: PlanRequestContext = { catalog: options.catalog, limits: options.limits };
  const inline = inlinePlanRequestChecks(context);
  const turns = options.turns ?? loopTurns;
  const inPlace = (job: PlanRequestJob): Promise<PlanRequestOutcome> => {
    const waiting = turns.turn();
    return waiting === undefined ? inline.run(job) : waiting.then(() => inline.run(job));
  };
  const max = Math.max(1, options.workers ?? Math.min(4, availableParallelism() - 1));
  const queueLimit = Math.max(0, options.queue ?? 32);
  const inlineBelow = options.inlineBelowBytes ?? 16 * 1024;
  const data: PlanCheckWorkerData = { capabilities: options.catalog.capabilities(), limits: options.limits };
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;
  let file: string | undefined;
  let building = false;

  function create(path: string): void {
    const worker = new Worker(path, {
      workerData: data,
      resourceLimits: { maxOldGenerationSizeMb: options.heapMb ?? 256 },
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const slot: Slot = { worker, ready: false, job: undefined, ended: false };
    worker.on(
      'message',
      (message: { ready?: boolean; id?: number; outcome?: PlanRequestOutcome; failure?: string }) => {
        if (message.ready) slot.ready = true;
        else if (slot.job !== undefined && message.id === slot.job.id) {
          const job = slot.job;
          slot.job = undefined;
          if (message.outcome) job.resolve(message.outcome);
          else job.reject(new Error(`the plan check failed: ${message.failure ?? 'no answer'}`));
        }
        pump();
      },
    );
    const failed = (why: string, cause?: unknown) => {
      if (slot.ended) return;
      slot.ended = true;
      slots.splice(slots.indexOf(slot), 1);
      void worker.terminate();
      const job = slot.job;
      slot.job = undefined;
      if (job !== undefined) job.resolve(workerDied(why));
      if (!slot.ready) {
        // A worker that cannot even load fails what waits for it, instead of being started again and again.
        const error = new Error(`the plan-check worker did not start: ${why}`, { cause });
        for (const waiting of queue.splice(0)) waiting.reject(error);
        return;
      }
      pump();
    };
    worker.on('error', (error: Error) => failed(error.message, error));
    worker.on('exit', (code: number) => failed(`exit code ${code}`));
    slots.push(slot);
  }

  function pump(): void {
    if (closed) return;
    if (file === undefined) {
      if (building) return;
      building = true;
      void bundledWorkerFile(WORKER, 'cairn-plan-check-worker').then(
        (built) => {
          file = built;
          pump();
        },
        (error: unknown) => {
          building = false;
          for (const job of queue.splice(0))
            job.reject(new Error('the plan-check worker cannot be built', { cause: error }));
        },
      );
      return;
    }
    while (slots.length < max) create(file);
    for (const slot of slots) {
      if (queue.length === 0) return;
      if (!slot.ready || slot.job !== undefined) continue;
      const job = queue.shift() as Job;
      slot.job = job;
      const bytes = job.job.bytes;
      slot.worker.postMessage({ id: job.id, job: job.job }, [bytes.buffer as ArrayBuffer]);
    }
  }

  const running = () => slots.filter((slot) => slot.job !== undefined).length;

  return {
    run(job) {
      if (closed || job.bytes.byteLength < inlineBelow) return inPlace(job);
      // Room for one job per worker and `queue` more: a worker still starting counts as busy.
      if (queue.length + running() >= max + queueLimit) return Promise.resolve(overloaded());
      const own = { ...job, bytes: ownBuffer(job.bytes) };
      return new Promise((resolve, reject) => {
        queue.push({ id: nextId++, job: own, resolve, reject });
        pump();
      });
    },
    load: () => ({ running: running(), waiting: queue.length }),
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('the plan-check pool was closed'));
      const ending = slots.splice(0).map((slot) => {
        slot.ended = true;
        slot.job?.reject(new Error('the plan-check pool was closed'));
        slot.job = undefined;
        return slot.worker.terminate();
      });
      await Promise.all(ending);
    },
  };
}
