/**
 * The live feed of a run's events: `GET /runs/{id}/events?follow=1`. Its cursor is an event's seq, which grows with
 * the run's decisions (dynamo-events.ts), so reading what follows the last seq read misses nothing.
 *
 * - Embedded, the answer is a stream of server-sent events (`text/event-stream`): each event of the audit log as it
 *   is recorded (`id:` its seq, `event:` its type, `data:` the event as the log lists it), until RunFinished, or at
 *   once when the run had already ended or paused and nothing follows the cursor. A comment every HEARTBEAT_MS keeps
 *   the connection from looking idle.
 * - Deployed (API Gateway and Lambda answer whole), and with `wait` anywhere, it is a long poll: the answer comes
 *   as soon as events follow the cursor, or after `wait` seconds (at most MAX_WAIT_SECONDS, inside API Gateway's
 *   29 s) with none; `finished` says that the run has ended or paused and nothing follows, so a follower stops.
 *
 * Either way the feed reads the log after its cursor every `pollMs`: a query of an empty range while nothing happens.
 */
import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import type { RunStatus } from '../plan/schema.ts';
import type { RunEventRecord, Store } from '../ports/store.ts';

/** How a stack serves the feed: whether it may stream its answer, and how often it reads the log for what is new. */
export interface FeedSettings {
  readonly stream: boolean;
  readonly pollMs: number;
}

/** Deployed: no streaming through API Gateway; a long poll reads the log twice a second. */
export const DEPLOYED_FEED: FeedSettings = { stream: false, pollMs: 500 };
/** The longest long poll: well inside API Gateway's 29 s and the API Lambda's timeout. */
export const MAX_WAIT_SECONDS = 20;
const HEARTBEAT_MS = 15_000;

/** A run in one of these has nothing more to say until someone acts on it: a follower stops once it has read all. */
const HELD: ReadonlySet<RunStatus> = new Set(['complete', 'failed', 'cancelled', 'paused']);

type FeedStore = Pick<Store, 'listEvents'>;

export interface FeedRead {
  readonly runId: string;
  /** The stored status of the run when the request came. */
  readonly status: RunStatus;
  readonly after: string | undefined;
  readonly limit: number;
}

export interface LongPoll {
  readonly events: RunEventRecord[];
  /** The run has ended or paused and no event follows this page. */
  readonly finished: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The run's last word so far is RunFinished (a reopened run's earlier one is followed by more). */
const endsFeed = (events: readonly RunEventRecord[]): boolean => events.at(-1)?.type === 'RunFinished';

/** Answers as soon as events follow the cursor, or after `waitMs` with none. */
export async function longPoll(
  store: FeedStore,
  read: FeedRead,
  options: { readonly waitMs: number; readonly pollMs: number; readonly now?: () => number },
): Promise<LongPoll> {
  const now = options.now ?? Date.now;
  const deadline = now() + options.waitMs;
  const held = HELD.has(read.status);
  for (;;) {
    const events = await store.listEvents(read.runId, {
      limit: read.limit,
      ...(read.after === undefined ? {} : { after: read.after }),
    });
    const whole = events.length < read.limit;
    if (events.length > 0) return { events, finished: whole && (held || endsFeed(events)) };
    if (held || now() >= deadline) return { events, finished: held };
    await sleep(Math.min(options.pollMs, Math.max(0, deadline - now())));
  }
}

/** Streams the run's events as server-sent events until RunFinished, or until the client goes. */
export function streamEvents(c: Context, store: FeedStore, read: FeedRead, pollMs: number): Response {
  return streamSSE(c, async (stream) => {
    let after = read.after;
    let lastWrite = Date.now();
    while (!stream.aborted && !stream.closed) {
      const events = await store.listEvents(read.runId, {
        limit: read.limit,
        ...(after === undefined ? {} : { after }),
      });
      for (const event of events) await send(stream, event);
      if (events.length > 0) {
        after = events.at(-1)?.seq;
        lastWrite = Date.now();
        if (events.length === read.limit) continue;
        if (endsFeed(events)) return;
      } else if (HELD.has(read.status)) {
        return;
      }
      if (Date.now() - lastWrite >= HEARTBEAT_MS) {
        await stream.write(': still following\n\n');
        lastWrite = Date.now();
      }
      await stream.sleep(pollMs);
    }
  });
}

const send = (stream: SSEStreamingApi, event: RunEventRecord): Promise<void> =>
  stream.writeSSE({ id: event.seq, event: event.type, data: JSON.stringify(event) });
