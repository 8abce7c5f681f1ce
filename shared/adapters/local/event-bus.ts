/**
 * The embedded event bus: publishes cairn's domain events as EventBridge envelopes and delivers them, in process,
 * to subscribers whose EventBridge pattern matches — the same patterns the deployed rules use. Delivery is
 * asynchronous (after the publishing call returns), like the real bus; a failing subscriber does not affect others.
 */

import { type EventPattern, matchesPattern } from '../../events/pattern-match.ts';
import { type DomainEvent, EVENT_SOURCE, type EventPublisher } from '../../ports/events.ts';

export interface BusEnvelope {
  readonly version: '0';
  readonly id: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: Readonly<Record<string, unknown>>;
}

export type BusSubscriber = (event: BusEnvelope) => Promise<void> | void;

export interface LocalEventBus extends EventPublisher {
  subscribe(pattern: EventPattern, subscriber: BusSubscriber): () => void;
  /** Resolves when every delivery started so far has settled (tests, shutdown). */
  drain(): Promise<void>;
}

export interface LocalEventBusOptions {
  readonly clock?: () => Date;
  readonly newId?: () => string;
  readonly onError?: (error: unknown, event: BusEnvelope) => void;
  readonly source?: string;
}

export function createLocalEventBus(options: LocalEventBusOptions = {}): LocalEventBus {
  const clock = options.clock ?? (() => new Date());
  const newId = options.newId ?? (() => crypto.randomUUID());
  const subscribers = new Set<{ pattern: EventPattern; subscriber: BusSubscriber }>();
  const inFlight = new Set<Promise<void>>();

  const deliver = (envelope: BusEnvelope): void => {
    for (const entry of subscribers) {
      if (!matchesPattern(envelope, entry.pattern)) continue;
      const delivery = (async () => {
        await Promise.resolve();
        await entry.subscriber(envelope);
      })()
        .catch((error: unknown) => options.onError?.(error, envelope))
        .finally(() => inFlight.delete(delivery));
      inFlight.add(delivery);
    }
  };

  return {
    async publish(events: readonly DomainEvent[]): Promise<void> {
      for (const event of events) {
        deliver({
          version: '0',
          id: newId(),
          'detail-type': event.detailType,
          source: options.source ?? EVENT_SOURCE,
          account: '000000000000',
          time: clock().toISOString(),
          region: 'local',
          resources: [],
          detail: event.detail,
        });
      }
    },
    subscribe(pattern, subscriber) {
      const entry = { pattern, subscriber };
      subscribers.add(entry);
      return () => subscribers.delete(entry);
    },
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
