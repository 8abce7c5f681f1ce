/**
 * The simulation's time and chance. Chance: seeded streams (mulberry32), one per purpose, each derived from the seed
 * and a label, so a change in one (a fault drawn one more time) does not reshuffle the others (the plans, a person's
 * answers) and a seed stays recognisable while the simulation grows. Time: a discrete-event loop over a priority
 * queue of tasks by virtual time, the simulation's only source of concurrency. Every timer, every adapter call's
 * latency and every actor's pause is a task here; nothing touches the wall clock or a real timer. Tasks due at the
 * same instant run in an order drawn from the seeded stream when they were scheduled, so one seed gives one
 * interleaving, and another seed another one.
 *
 * After each task the loop lets every promise continuation that task set off run (one macrotask turn drains the
 * microtask queue) before it takes the next: an `await` chain advances only within its task's instant, and the
 * order of continuations is the program's own, so it is as deterministic as the task order.
 */

/** 32-bit FNV-1a of a text: how a label becomes a stream's seed. */
export function hash32(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h >>> 0;
}

export class Rng {
  private state: number;
  /** The seed it started from: what its forks derive from. */
  private readonly origin: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
    this.origin = this.state;
  }

  /** A new stream for `label`: its draws never depend on how often this one was drawn from. */
  static of(seed: number, label: string): Rng {
    return new Rng(hash32(label, Math.imul(seed >>> 0, 0x9e3779b1) ^ 0x5bd1e995));
  }

  /** A stream of its own for `label`, derived from this stream's seed (not from its position). */
  fork(label: string): Rng {
    return new Rng(hash32(label, this.origin));
  }

  /** In [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: no items');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** One of the weighted choices. */
  weighted<T>(table: readonly (readonly [T, number])[]): T {
    const total = table.reduce((sum, [, w]) => sum + w, 0);
    let roll = this.next() * total;
    for (const [value, w] of table) {
      roll -= w;
      if (roll < 0) return value;
    }
    const last = table.at(-1);
    if (last === undefined) throw new Error('Rng.weighted: no choices');
    return last[0];
  }
}

interface Task {
  readonly at: number;
  readonly tie: number;
  readonly seq: number;
  readonly run: () => void;
  cancelled: boolean;
}

export interface TaskHandle {
  cancel(): void;
}

export type LoopEnd = 'quiet' | 'horizon' | 'budget';

/** Lets the microtasks queued so far (and those they queue) run: one turn of the event loop. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class Scheduler {
  /** Virtual milliseconds since the epoch. */
  now: number;
  /** Tasks run so far. */
  steps = 0;
  private readonly heap: Task[] = [];
  private seq = 0;

  constructor(
    private readonly rng: Rng,
    start: number,
  ) {
    this.now = start;
  }

  /** The virtual time as a Date: the shell's clock. */
  readonly clock = (): Date => new Date(this.now);

  iso(): string {
    return new Date(this.now).toISOString();
  }

  /** Runs `run` at virtual time `at` (not before now). */
  at(at: number, run: () => void): TaskHandle {
    const task: Task = { at: Math.max(at, this.now), tie: this.rng.next(), seq: this.seq++, run, cancelled: false };
    this.push(task);
    return {
      cancel: () => {
        task.cancelled = true;
      },
    };
  }

  after(ms: number, run: () => void): TaskHandle {
    return this.at(this.now + Math.max(0, ms), run);
  }

  /** Resolves `ms` virtual milliseconds from now. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.after(ms, resolve);
    });
  }

  pending(): number {
    return this.heap.length;
  }

  /** Runs tasks until none is left, the next one is past `horizon`, or `maxSteps` have run. */
  async run(horizon: number, maxSteps: number): Promise<LoopEnd> {
    await turn();
    for (;;) {
      const task = this.pop();
      if (task === undefined) return 'quiet';
      if (task.cancelled) continue;
      if (task.at > horizon) {
        this.push(task);
        return 'horizon';
      }
      if (this.steps >= maxSteps) return 'budget';
      this.now = task.at;
      this.steps++;
      task.run();
      await turn();
    }
  }

  private before(a: Task, b: Task): boolean {
    if (a.at !== b.at) return a.at < b.at;
    if (a.tie !== b.tie) return a.tie < b.tie;
    return a.seq < b.seq;
  }

  private push(task: Task): void {
    const heap = this.heap;
    heap.push(task);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as Task;
      if (!this.before(task, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = task;
  }

  private pop(): Task | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && this.before(heap[right] as Task, heap[left] as Task) ? right : left;
      if (!this.before(heap[child] as Task, last)) break;
      heap[i] = heap[child] as Task;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
