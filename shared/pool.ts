/**
 * Work over many of a run's steps (an invalidation's moves, a cancel's closes, a release to a wide fan-out) goes
 * through a pool of a few calls in flight, not one call per step at once: a burst of 2,000 writes holds 2,000
 * requests, their answers and their retries in memory together, and on AWS throttles the partition it hits. A pool,
 * not rounds: a round would wait for its slowest call before the next one starts.
 */

/** Calls in flight per pool: enough to hide a store round trip, few enough to keep memory and sockets flat. */
export const POOL_SIZE = 16;

/**
 * `work` on every item, at most `size` at a time; results in the items' order. After a failure no new item starts,
 * and the failure is thrown once the calls in flight are done: unlike Promise.all, nothing is still running when the
 * caller's retry begins.
 */
export async function mapInPool<T, R>(
  items: readonly T[],
  work: (item: T, index: number) => Promise<R>,
  size = POOL_SIZE,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && failure === undefined) {
      const index = next++;
      try {
        results[index] = await work(items[index] as T, index);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
  if (failure) throw failure.error;
  return results;
}

/** `work` on every item, at most `size` at a time. */
export async function forEachInPool<T>(
  items: readonly T[],
  work: (item: T, index: number) => Promise<void>,
  size = POOL_SIZE,
): Promise<void> {
  await mapInPool(items, work, size);
}
