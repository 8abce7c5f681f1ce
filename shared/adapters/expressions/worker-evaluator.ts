/**
 * The isolated ExpressionEvaluator: a small pool of warm worker processes (./worker.ts), each with a heap limit,
 * and a wall-clock kill per request. Inside the worker the cooperative bounds of shared/plan/expression-limits.ts
 * stop a loop or a recursion at `timeoutMs`; what they cannot stop (a backtracking regular expression, a native
 * call that builds a huge value, a heap that fills up) is stopped from here: the worker is killed after
 * `timeoutMs + graceMs`, or dies of its heap limit, and the request's outcomes say `limit`. The engine's event loop
 * never runs plan code, so it keeps answering while a worker spins, and its memory is never the plan's.
 *
 * Processes, not worker threads: a worker thread that reaches its heap limit in one large allocation (flattening a
 * 90 MB string) takes the whole process down with it (V8's fatal out-of-memory; Node gives a worker 16 MB of
 * leeway past its limit), where a child process only ends itself.
 *
 * A request's clock starts when a worker takes it, not while it waits for one; a worker that was killed is
 * replaced at once, so the pool stays warm. Workers are unref'd: an idle pool does not keep a process alive.
 *
 * Workers are started one at a time: the next is forked once the one before it has said `ready`. A fork blocks the
 * calling thread while the kernel copies the engine's page tables and the child reaches exec (tens of ms, hundreds
 * on a busy host); the embedded runtime's one event loop also answers `/health`, and forking the whole pool in one
 * turn held it for 190–450 ms (bench:hostile).
 */
import { type ChildProcess, type ForkOptions, fork as forkProcess } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { clipMessage } from '../../plan/bounded-text.ts';
import type { EvaluationOutcome, EvaluationRequest, ExpressionLimits } from '../../plan/expression-limits.ts';
import type { ExpressionEvaluator } from '../../ports/expressions.ts';
import { bundledWorkerFile } from '../worker-bundle.ts';

export interface WorkerEvaluatorOptions {
  readonly limits: ExpressionLimits;
  /** The most workers at once (at least 1); a request waits when all are busy. */
  readonly workers: number;
  /** The worker's module; default: ./worker.ts beside this file (a bundle passes its built worker). */
  readonly workerFile?: string | URL | undefined;
  /** How long past `timeoutMs` a worker may run before it is terminated (its own guardrail answers first). */
  readonly graceMs?: number;
  /** Starts a worker process; default: node's `fork` (tests watch the starts). */
  readonly fork?: (file: string, args: readonly string[], options: ForkOptions) => ChildProcess;
}

interface Job {
  readonly id: number;
  readonly request: EvaluationRequest;
  readonly resolve: (outcomes: readonly EvaluationOutcome[]) => void;
  readonly reject: (error: Error) => void;
}

interface Slot {
  readonly worker: ChildProcess;
  ready: boolean;
  job: Job | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Set when the pool ended this worker on purpose: its exit is no news. */
  ended: boolean;
}

const DEFAULT_GRACE_MS = 500;
const TS_WORKER = new URL('./worker.ts', import.meta.url);

/** The worker's module as a file to fork: a bundle's built worker, or one built here from the sources. */
type WorkerCode = { readonly file: string };

/** Running from the TypeScript sources, the worker is bundled once per process (../worker-bundle.ts). */
const workerCode = async (file: URL): Promise<WorkerCode> => ({
  file: await bundledWorkerFile(file, 'cairn-expression-worker'),
});

/** Every expression of a request failed at a bound; the message, bounded, names the worker's own failure. */
const limitOutcomes = (request: EvaluationRequest, message: string): EvaluationOutcome[] =>
  request.sources.map(() => ({ ok: false, limit: true, message: clipMessage(message) }));

export type WorkerEvaluator = ExpressionEvaluator;

export function createWorkerEvaluator(options: WorkerEvaluatorOptions): WorkerEvaluator {
  const { limits } = options;
  const given = options.workerFile;
  const file = given === undefined ? TS_WORKER : given instanceof URL ? given : pathToFileURL(given);
  const max = Math.max(1, options.workers);
  const killAfter = limits.timeoutMs + (options.graceMs ?? DEFAULT_GRACE_MS);
  const fork = options.fork ?? forkProcess;
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;
  let loaded: WorkerCode | undefined;
  let building = false;
  /** How many workers the pool keeps: none until work or warm() asks, then all of them (and it stays warm). */
  let wanted = 0;

  /** Ends a worker; one that was killed for its request is replaced at once, so the pool stays warm. */
  function retire(slot: Slot, replace: boolean): void {
    slot.ended = true;
    if (slot.timer !== undefined) clearTimeout(slot.timer);
    slot.timer = undefined;
    const index = slots.indexOf(slot);
    if (index >= 0) slots.splice(index, 1);
    slot.worker.kill('SIGKILL');
    if (replace) grow();
  }

  /** Starts one more worker if the pool wants one and none is loading: the next starts when this one is ready. */
  function grow(): void {
    if (closed || loaded === undefined || slots.length >= wanted || slots.some((slot) => !slot.ready)) return;
    create(loaded);
  }

  /** A worker holds the process open only while it loads or runs a request: an idle pool lets a process end. */
  function hold(slot: Slot, open: boolean): void {
    if (open) {
      slot.worker.ref();
      slot.worker.channel?.ref();
    } else {
      slot.worker.unref();
      slot.worker.channel?.unref();
    }
  }

  function finish(slot: Slot, outcomes: readonly EvaluationOutcome[]): void {
    const job = slot.job;
    hold(slot, false);
    if (slot.timer !== undefined) clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
    job?.resolve(outcomes);
  }

  function start(slot: Slot, job: Job): void {
    slot.job = job;
    hold(slot, true);
    slot.timer = setTimeout(() => {
      finish(slot, limitOutcomes(job.request, `expression limit: evaluation took longer than ${limits.timeoutMs} ms`));
      retire(slot, true);
      pump();
    }, killAfter);
    slot.worker.send({ id: job.id, request: job.request });
  }

  function create(code: WorkerCode): Slot {
    const worker = fork(code.file, [JSON.stringify(limits)], {
      execArgv: [`--max-old-space-size=${limits.memoryMb}`],
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      serialization: 'json',
    });
    const slot: Slot = { worker, ready: false, job: undefined, timer: undefined, ended: false };
    worker.on('message', (message: { ready?: boolean; id?: number; outcomes?: EvaluationOutcome[] }) => {
      if (message.ready) {
        slot.ready = true;
        if (slot.job === undefined) hold(slot, false);
        if (allReady()) for (const resolve of warmers.splice(0)) resolve();
      } else if (slot.job !== undefined && message.id === slot.job.id && message.outcomes)
        finish(slot, message.outcomes);
      pump();
      // After the work is handed out: the next worker starts once this one is up.
      grow();
    });
    const failed = (why: string, cause?: unknown) => {
      if (slot.ended) return;
      const job = slot.job;
      slot.job = undefined;
      const wasReady = slot.ready;
      retire(slot, job !== undefined && wasReady);
      if (job !== undefined && wasReady) {
        // It was running plan code when it died: out of memory (V8 aborts at the heap limit) or a native crash.
        job.resolve(limitOutcomes(job.request, `expression limit: evaluation ended its worker (${why})`));
      } else if (!wasReady) {
        // A worker that cannot even load fails what waits for it, instead of being started again and again.
        const error = new Error(`the expression worker did not start: ${why}`, { cause });
        for (const waiting of queue.splice(0)) waiting.reject(error);
        job?.reject(error);
      }
      pump();
    };
    worker.on('error', (error: Error) => failed(error.message, error));
    worker.on('exit', (code: number | null, signal: NodeJS.Signals | null) =>
      failed(signal === null ? `exit code ${code}` : `signal ${signal}`),
    );
    slots.push(slot);
    return slot;
  }

  function pump(): void {
    if (loaded === undefined) {
      if (queue.length > 0 && !building) {
        building = true;
        void workerCode(file).then(
          (code) => {
            building = false;
            loaded = code;
            pump();
          },
          (error: unknown) => {
            building = false;
            for (const job of queue.splice(0))
              job.reject(new Error('the expression worker cannot be built', { cause: error }));
          },
        );
      }
      return;
    }
    while (queue.length > 0) {
      const idle = slots.find((slot) => slot.ready && slot.job === undefined);
      if (idle) {
        start(idle, queue.shift() as Job);
        continue;
      }
      // Warm every worker, not just one: a second request must not wait for a worker to load while a first one
      // spins. They start one after another (grow), so no turn of the loop forks more than one.
      wanted = max;
      grow();
      return;
    }
  }

  const warmers: (() => void)[] = [];
  const allReady = () => slots.length === max && slots.every((slot) => slot.ready);

  return {
    async warm() {
      if (loaded === undefined) {
        // One request loads the worker's code and starts the pool.
        await this.evaluate({ sources: ['null'], bindings: { objective: '', outputs: {} } });
      }
      wanted = max;
      if (allReady()) return;
      const ready = new Promise<void>((resolve) => warmers.push(resolve));
      grow();
      await ready;
    },
    evaluate(request) {
      if (request.sources.length === 0) return Promise.resolve([]);
      return new Promise((resolve, reject) => {
        queue.push({ id: nextId++, request, resolve, reject });
        pump();
      });
    },
    async close() {
      closed = true;
      for (const job of queue.splice(0)) job.reject(new Error('the expression evaluator was closed'));
      for (const slot of [...slots]) {
        slot.job?.reject(new Error('the expression evaluator was closed'));
        slot.job = undefined;
        retire(slot, false);
      }
      closed = false;
    },
  };
}
