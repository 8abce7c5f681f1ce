/**
 * How often each quota refused something, by kind: what `npm start` logs, the stack's `stats().throttles` reports
 * and the benchmarks print as "throttles absorbed".
 * - `sfn.start`: a StartExecution attempt throttled (the SDK's retries included: each attempt counts);
 *   `sfn.start.surfaced`: one that still failed after them, as cairn's code saw it;
 * - `lambda.concurrency`: a synchronous invocation (a Task) throttled; `lambda.waited`: an asynchronous one (a bus
 *   rule, the outbox, a planning job) that had to wait for a place;
 * - `dynamodb.read`, `dynamodb.write`: a request (or a batch's item) refused for its partition's throughput;
 * - `api.timeout`: an API request cut at its time limit;
 * - `sfn.start.deferred`: a step execution's start the decider deferred (its shell's pacer had no room for it, or the
 *   bucket throttled it past the SDK's retries), counted as the run's StartsThrottled letters reach its decider.
 */
import type { RunCommandInput } from '../../../shared/engine/run/commands.ts';
import type { BatchHandler } from '../../../shared/ports/mailbox.ts';

export type ThrottleKind =
  | 'sfn.start'
  | 'sfn.start.surfaced'
  | 'lambda.concurrency'
  | 'lambda.waited'
  | 'dynamodb.read'
  | 'dynamodb.write'
  | 'api.timeout'
  | 'sfn.start.deferred';

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

/** The decider's batch handler, counting the starts each StartsThrottled letter hands back (`sfn.start.deferred`). */
export function countDeferredStarts(handle: BatchHandler['handle'], counter: ThrottleCounter): BatchHandler['handle'] {
  return (runId, commands: readonly RunCommandInput[]) => {
    for (const command of commands)
      if (command.kind === 'StartsThrottled')
        for (let i = 0; i < command.starts.length; i++) counter.count('sfn.start.deferred');
    return handle(runId, commands);
  };
}
