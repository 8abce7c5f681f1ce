/**
 * The embedded stack's change stream: the store adapter hands over each announcing write as it lands (the same
 * record shape DynamoDB Streams deliver), and this passes them to the relay in batches, in write order, a moment
 * later (as a stream does). A batch that fails is tried again, as a stream's batch is.
 */
import type { StreamRecord } from '../../events/outbox.ts';

export interface LocalOutboxStream {
  /** The store adapter's stream hook. */
  readonly accept: (record: StreamRecord) => void;
  /** Resolves when every record accepted so far has been relayed (tests, shutdown). */
  drain(): Promise<void>;
}

const RETRIES = 5;

/** The relay as the stream sees it (services/outbox/relay.ts). */
export interface StreamConsumer {
  relay(records: readonly StreamRecord[]): Promise<unknown>;
}

/** A stream batch holds at most this many records (the deployed event source mapping's batch size). */
const BATCH_SIZE = 100;

export function createLocalOutboxStream(
  relay: StreamConsumer,
  onError: (error: unknown) => void = (error) =>
    process.stderr.write(`cairn: relaying the outbox failed: ${String(error)}\n`),
): LocalOutboxStream {
  const inFlight = new Set<Promise<void>>();
  let queued: StreamRecord[] = [];
  const deliver = async (records: readonly StreamRecord[]): Promise<void> => {
    for (let tries = 1; ; tries++) {
      try {
        await relay.relay(records);
        return;
      } catch (error) {
        if (tries >= RETRIES) {
          onError(error);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 20 * tries));
      }
    }
  };
  const track = (work: Promise<void>): void => {
    const tracked = work.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };
  // Records that land in the same turn of the event loop travel as one batch, in write order, as a stream's do.
  const flush = async (): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    const batch = queued;
    queued = [];
    for (let i = 0; i < batch.length; i += BATCH_SIZE) await deliver(batch.slice(i, i + BATCH_SIZE));
  };
  return {
    accept(record) {
      queued.push(record);
      if (queued.length === 1) track(flush());
    },
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
