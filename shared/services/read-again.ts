/**
 * Reads tried again in place. A consumer that has no later safety net (the replanner: once its deliveries are
 * spent, a failure it did not answer keeps the run waiting for a replan that never comes) cannot afford to repeat
 * a whole answer, many calls long, because one read of it was throttled: each try of the answer would then fail
 * with the chance that any of its calls fails. A read changes nothing, so repeating it alone is always safe; writes
 * are left to the caller, whose answer is built to be repeated whole.
 */
import { isTransientPlatformError } from '../errors.ts';
import type { Store } from '../ports/store.ts';
import { type TryAgainPolicy, tryAgain } from './write-again.ts';

/** Tries of one read: with a 5 % failure rate, one in 3.2 million reads is still lost. */
export const READ_TRIES = 5;

const READ_POLICY: TryAgainPolicy = {
  tries: READ_TRIES,
  pauseMs: (tries) => 20 * 2 ** (tries - 1),
  when: isTransientPlatformError,
};

/** The store methods that only read. */
const isRead = (name: string): boolean => name.startsWith('get') || name.startsWith('list');

/** `store`, whose reads are tried again while the platform's failure may pass (throttles, timeouts). */
export function withReadsTriedAgain(store: Store): Store {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      // Bound to the store itself: a class adapter's private fields are not reachable through the proxy.
      if (typeof property !== 'string' || !isRead(property)) return value.bind(target);
      return (...args: unknown[]) => tryAgain(READ_POLICY, () => Promise.resolve(value.apply(target, args)));
    },
  });
}
