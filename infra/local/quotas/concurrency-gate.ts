/**
 * A concurrency gate: at most `limit` holders at once, as Lambda's concurrency is at most so many invocations in
 * flight. A synchronous invocation that finds the gate full is refused (`tryEnter`: Lambda throttles it, the caller
 * retries); an asynchronous one waits for a place (`enter`: Lambda keeps the event and retries it itself), places
 * going to waiters in the order they came.
 */

export type Leave = () => void;

export interface ConcurrencyGate {
  readonly limit: number;
  /** A place now, or undefined when all `limit` are held. */
  tryEnter(): Leave | undefined;
  /** A place, now or once one is left. */
  enter(): Promise<Leave>;
  /** Places held now. */
  inUse(): number;
  /** Callers of `enter` still waiting. */
  waiting(): number;
}

export function createConcurrencyGate(limit: number): ConcurrencyGate {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`a concurrency limit is 1 or more, got ${limit}`);
  let held = 0;
  const queue: ((leave: Leave) => void)[] = [];

  const place = (): Leave => {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = queue.shift();
      // The place passes straight to the next waiter: a caller of tryEnter cannot take it in between.
      if (next) next(place());
      else held -= 1;
    };
  };

  return {
    limit,
    tryEnter() {
      if (held >= limit) return undefined;
      held += 1;
      return place();
    },
    enter() {
      if (held < limit) {
        held += 1;
        return Promise.resolve(place());
      }
      return new Promise<Leave>((resolve) => queue.push(resolve));
    },
    inUse: () => held,
    waiting: () => queue.length,
  };
}
