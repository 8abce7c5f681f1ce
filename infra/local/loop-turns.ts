/**
 * Cooperative time slices for the embedded runtime's one event loop. Everything `npm start` runs — the HTTP server,
 * the state machines, every handler, dynalite — shares that loop, and the store answers in process: a store call
 * is a few promise hops, never a wait for I/O. So fifty runs moving at once chain their work through microtasks
 * and immediates, and one turn of the loop can hold hundreds of milliseconds of it (seconds on a busy machine)
 * while `/health` and every other request wait for the poll phase. On AWS each handler is its own invocation and
 * nothing of this exists.
 *
 * The hot paths (a store call, a Lambda invocation) ask `turn()` first. While the current slice has time left it
 * answers `undefined` and the caller goes on synchronously (no cost on the quiet path); once the slice is spent the
 * caller waits, in arrival order, and waiting work is let go one piece per loop turn, each after the loop has
 * polled for I/O. A piece of work between two such calls is short (one store call, one handler step), so the loop
 * polls at least every slice plus one piece.
 */
import { performance } from 'node:perf_hooks';
// The timers module's own: a test's fake timers replace the global ones, and must not stop the store.
import { setImmediate } from 'node:timers';

/** How long work runs on before it lets the loop poll: well under the 1 s /health must answer in on a busy host. */
export const DEFAULT_SLICE_MS = 20;

export interface LoopTurns {
  /** `undefined` while the slice has time left (go on); otherwise resolves after the loop polled, in arrival order. */
  turn(): Promise<void> | undefined;
  /** How often work waited for a later turn (tests, benches). */
  readonly waits: number;
}

export interface LoopTurnsOptions {
  readonly sliceMs?: number;
  /** Monotonic milliseconds (tests). */
  readonly now?: () => number;
  /** Runs `release` on a later turn of the loop, after its poll phase (tests). */
  readonly later?: (release: () => void) => void;
}

export function createLoopTurns(options: LoopTurnsOptions = {}): LoopTurns {
  const sliceMs = options.sliceMs ?? DEFAULT_SLICE_MS;
  const now = options.now ?? (() => performance.now());
  const later = options.later ?? ((release: () => void) => void setImmediate(release));
  const waiting: (() => void)[] = [];
  let sliceStart = now();
  let scheduled = false;
  let waits = 0;

  // One waiter per turn: an immediate queued from an immediate runs on the loop's next turn, after it polled.
  const release = () => {
    sliceStart = now();
    waiting.shift()?.();
    if (waiting.length > 0) later(release);
    else scheduled = false;
  };

  return {
    turn() {
      if (waiting.length === 0 && now() - sliceStart < sliceMs) return undefined;
      waits += 1;
      const waited = new Promise<void>((resolve) => waiting.push(resolve));
      if (!scheduled) {
        scheduled = true;
        later(release);
      }
      return waited;
    },
    get waits() {
      return waits;
    },
  };
}

/** The process's one loop, shared by every embedded stack in it. */
export const loopTurns: LoopTurns = createLoopTurns();
