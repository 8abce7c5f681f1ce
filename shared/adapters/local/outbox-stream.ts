/**
 * The embedded stack's change stream: the store adapter hands over each announcing write as it lands (the same
 * record shape DynamoDB Streams deliver), and this passes it to the relay. The relay's publish starts before the
 * write's caller goes on, so events reach the in-process bus in write order; the audit-log writes follow in the
 * background. A batch that fails is tried again, as a stream's batch is.
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

export function createLocalOutboxStream(
  relay: StreamConsumer,
  onError: (error: unknown) => void = (error) =>
    process.stderr.write(`cairn: relaying the outbox failed: ${String(error)}\n`),
): LocalOutboxStream {
  const inFlight = new Set<Promise<void>>();
  const deliver = async (record: StreamRecord): Promise<void> => {
    for (let tries = 1; ; tries++) {
      try {
        await relay.relay([record]);
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
  return {
    accept(record) {
      const delivery = deliver(record).finally(() => inFlight.delete(delivery));
      inFlight.add(delivery);
    },
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
