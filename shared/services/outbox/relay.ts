/**
 * The outbox relay: what the table's change stream delivers, it publishes and records. Each announcing write (see
 * events/outbox.ts) becomes its events on the bus, then entries of the run's audit log. Delivery is at least once:
 * a batch that fails is delivered again whole (Lambda's stream retries; the embedded stream's retry below), so a
 * consumer may see an event twice — every consumer is idempotent — and the audit log keys make a repeat a no-op.
 */
import { isEventTooLargeError } from '../../errors.ts';
import { announcementsOf, type OutboxEntry, type StreamRecord } from '../../events/outbox.ts';
import type { DomainEvent, EventPublisher } from '../../ports/events.ts';
import type { Store } from '../../ports/store.ts';

export interface OutboxRelayDeps {
  readonly events: EventPublisher;
  readonly store: Pick<Store, 'recordEvents' | 'restoreAnnouncements'>;
}

export interface OutboxRelay {
  /** Publishes and records the announcements of a batch of stream records; throws when the batch must be redone. */
  relay(records: readonly StreamRecord[]): Promise<{ readonly announcements: number; readonly events: number }>;
}

/** The domain events of announcements, each detail stamped with the time of the write that announced it. */
export const domainEventsOf = (entries: readonly OutboxEntry[]): DomainEvent[] =>
  entries.flatMap((entry) =>
    entry.events.map((event) => ({ detailType: event.type, detail: { ...event.detail, at: entry.at } })),
  );

export function createOutboxRelay(deps: OutboxRelayDeps): OutboxRelay {
  return {
    async relay(records) {
      const announced = announcementsOf(records);
      if (announced.length === 0) return { announcements: 0, events: 0 };
      // An announcement too large for its item left its events out of line (written before the item): read back.
      const entries = announced.some((entry) => entry.eventsRef !== undefined)
        ? await deps.store.restoreAnnouncements(announced)
        : announced;
      const events = domainEventsOf(entries);
      // Published first: a crash before the audit write redelivers the batch, and a repeat on the bus is allowed.
      try {
        await deps.events.publish(events);
      } catch (error) {
        // An event no PutEvents request can carry fails every redelivery the same way: the others were put, so the
        // audit log records the batch before the failure goes on to the stream's retries and dead-letter queue.
        if (isEventTooLargeError(error)) await deps.store.recordEvents(entries);
        throw error;
      }
      await deps.store.recordEvents(entries);
      return { announcements: entries.length, events: events.length };
    },
  };
}
