/**
 * How often each quota refused something, by kind: what `npm start` logs, the stack's `stats().throttles` reports
 * and the benchmarks print as "throttles absorbed".
 * - `sfn.start`: a StartExecution attempt throttled (the SDK's retries included: each attempt counts);
 *   `sfn.start.surfaced`: one that still failed after them, as cairn's code saw it;
 * - `lambda.concurrency`: a synchronous invocation (a Task) throttled; `lambda.waited`: an asynchronous one (a bus
 *   rule, the outbox, a planning job) that had to wait for a place;
 * - `dynamodb.read`, `dynamodb.write`: a request (or a batch's item) refused for its partition's throughput;
 * - `api.timeout`: an API request cut at its time limit.
 */

export type ThrottleKind =
  | 'sfn.start'
  | 'sfn.start.surfaced'
  | 'lambda.concurrency'
  | 'lambda.waited'
  | 'dynamodb.read'
  | 'dynamodb.write'
  | 'api.timeout';

export interface ThrottleCounter {
  count(kind: ThrottleKind): void;
  /** The counts so far, kinds that never fired left out. */
  counts(): Readonly<Partial<Record<ThrottleKind, number>>>;
}

export function createThrottleCounter(): ThrottleCounter {
  const counts: Partial<Record<ThrottleKind, number>> = {};
  return {
    count(kind) {
      counts[kind] = (counts[kind] ?? 0) + 1;
    },
    counts: () => ({ ...counts }),
  };
}

/** `kind n, kind n` in a stable order, or `none`. */
export const formatThrottles = (counts: Readonly<Record<string, number>>): string =>
  Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ') || 'none';
