import { describe, expect, it } from 'vitest';
import { createHandler } from '../../../functions/outbox.ts';
import type { StreamRecord } from '../../../shared/events/outbox.ts';
import { createStreamBatchConsumer } from '../../../shared/services/outbox/stream-batch.ts';

const ttl = { type: 'Service', principalId: 'dynamodb.amazonaws.com' };
const runKeys = (runId: string) => ({ PK: { S: `RUN#${runId}` }, SK: { S: 'RUN' } });

function harness() {
  const purged: [string, string | undefined][] = [];
  const relayed: StreamRecord[][] = [];
  let redrives = 0;
  const streamBatch = createStreamBatchConsumer({
    relay: {
      relay: async (records) => {
        relayed.push([...records]);
        return { announcements: 0, events: 0 };
      },
    },
    retention: {
      purgeRun: async (runId, runKey) => {
        purged.push([runId, runKey]);
        return 1;
      },
    },
  });
  const handler = createHandler({
    streamBatch,
    redrive: {
      redrive: async () => {
        redrives += 1;
        return { letters: 0, redriven: 0, announcements: 0, events: 0, expired: 0, unreadable: 0, failed: 0 };
      },
    },
  });
  return { handler, purged, relayed, redrives: () => redrives };
}

describe('outbox handler', () => {
  it('purges each run TTL removed, with its run key, and relays the batch', async () => {
    const { handler, purged, relayed } = harness();
    const records = [
      { eventName: 'REMOVE', userIdentity: ttl, dynamodb: { Keys: runKeys('r1'), OldImage: { ...runKeys('r1') } } },
      {
        eventName: 'REMOVE',
        userIdentity: ttl,
        dynamodb: { Keys: runKeys('r2'), OldImage: { ...runKeys('r2'), idempotencyKey: { S: 'k2' } } },
      },
      { eventName: 'MODIFY', dynamodb: { NewImage: { ...runKeys('r3') } } },
    ];
    expect(await handler({ Records: records })).toEqual({ announcements: 0, events: 0, expiredRuns: 2 });
    expect(purged).toEqual([
      ['r1', undefined],
      ['r2', 'k2'],
    ]);
    expect(relayed).toHaveLength(1);
  });

  it('purges nothing for a run item someone deleted, only for TTL', async () => {
    const { handler, purged } = harness();
    await handler({ Records: [{ eventName: 'REMOVE', dynamodb: { Keys: runKeys('r1'), OldImage: runKeys('r1') } }] });
    expect(purged).toEqual([]);
  });

  it('runs the redrive on the schedule’s event, and relays nothing then', async () => {
    const { handler, relayed, redrives } = harness();
    const scheduled = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
    expect(await handler(scheduled)).toMatchObject({ letters: 0, redriven: 0 });
    expect(redrives()).toBe(1);
    expect(relayed).toEqual([]);
  });

  it('refuses an event that is neither a stream batch nor the schedule’s', async () => {
    const { handler, redrives } = harness();
    await expect(handler({ source: 'aws.events', 'detail-type': 'Something Else' })).rejects.toThrow(/invalid/);
    expect(redrives()).toBe(0);
  });
});
