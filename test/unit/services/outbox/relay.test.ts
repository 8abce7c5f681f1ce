import { describe, expect, it } from 'vitest';
import { CairnError, EventTooLargeError } from '../../../../shared/errors.ts';
import { encodeOutbox, type OutboxEntry, type StreamRecord } from '../../../../shared/events/outbox.ts';
import type { DomainEvent } from '../../../../shared/ports/events.ts';
import { createOutboxRelay } from '../../../../shared/services/outbox/relay.ts';

const entry: OutboxEntry = {
  id: 'e1',
  runId: 'r1',
  at: '2026-12-01T00:00:00.000Z',
  events: [
    { type: 'StepsInvalidated', detail: { runId: 'r1', stepIds: ['a'], part: 1, parts: 1, total: 1, reason: 'x' } },
  ],
};
const record: StreamRecord = { eventName: 'INSERT', dynamodb: { NewImage: { outbox: { S: encodeOutbox(entry) } } } };

function relayWith(failure: Error) {
  const recorded: OutboxEntry[][] = [];
  const relay = createOutboxRelay({
    events: {
      publish: async (_events: readonly DomainEvent[]) => {
        throw failure;
      },
    },
    store: {
      recordEvents: async (entries) => {
        recorded.push([...entries]);
      },
      restoreAnnouncements: async (entries) => [...entries],
    },
  });
  return { relay, recorded };
}

describe('createOutboxRelay', () => {
  it('records the audit log of a batch with an event too large to publish, then fails it for the retries', async () => {
    const { relay, recorded } = relayWith(
      new EventTooLargeError([{ detailType: 'Big', runId: 'r1', bytes: 300_000 }], 262_144),
    );
    await expect(relay.relay([record])).rejects.toMatchObject({ name: 'EventTooLargeError' });
    expect(recorded).toEqual([[entry]]);
  });

  it('records nothing when publishing failed otherwise: the whole batch is delivered again', async () => {
    const { relay, recorded } = relayWith(new CairnError('EventPublishError', 'throttled', { retryable: true }));
    await expect(relay.relay([record])).rejects.toMatchObject({ name: 'EventPublishError' });
    expect(recorded).toEqual([]);
  });
});
