/**
 * The deployed outbox redrive, from the on-failure queue's message to the relay: the real stream reader over a fake
 * DynamoDB Streams client, the real stream batch consumer and relay over a fake bus and audit log, a fake queue.
 */
import { type _Record, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from 'vitest';
import { createDynamoStreamReader } from '../../../../shared/adapters/aws/outbox-dead-letters.ts';
import { encodeOutbox, type OutboxEntry } from '../../../../shared/events/outbox.ts';
import type { DomainEvent } from '../../../../shared/ports/events.ts';
import type { DeadLetter, DeadLetterQueue } from '../../../../shared/ports/outbox-redrive.ts';
import { createOutboxRedrive } from '../../../../shared/services/outbox/redrive.ts';
import { createOutboxRelay } from '../../../../shared/services/outbox/relay.ts';
import { createStreamBatchConsumer } from '../../../../shared/services/outbox/stream-batch.ts';

const STREAM = 'arn:aws:dynamodb:us-east-1:123456789012:table/cairn/stream/2026-12-01T00:00:00.000';
const NOW = new Date('2026-12-02T12:00:00.000Z');

const entry = (id: string, runId: string): OutboxEntry => ({
  id,
  runId,
  at: '2026-12-02T11:00:00.000Z',
  events: [{ type: 'StepSucceeded', detail: { runId, stepId: 'a', generation: 1 } }],
});

/** A shard's records, as GetRecords answers them: announcing writes and one the mapping's filter passed over. */
const SHARD: _Record[] = [
  {
    eventName: 'MODIFY',
    dynamodb: { SequenceNumber: '100', NewImage: { outbox: { S: encodeOutbox(entry('e0', 'r0')) } } },
  },
  {
    eventName: 'MODIFY',
    dynamodb: { SequenceNumber: '200', NewImage: { outbox: { S: encodeOutbox(entry('e1', 'r1')) } } },
  },
  { eventName: 'MODIFY', dynamodb: { SequenceNumber: '300', NewImage: { status: { S: 'running' } } } },
  {
    eventName: 'INSERT',
    dynamodb: { SequenceNumber: '1000', NewImage: { outbox: { S: encodeOutbox(entry('e2', 'r2')) } } },
  },
  {
    eventName: 'MODIFY',
    dynamodb: { SequenceNumber: '1100', NewImage: { outbox: { S: encodeOutbox(entry('e3', 'r3')) } } },
  },
];

/** GetShardIterator at a sequence number, then pages of two records, as the stream would page them. */
function fakeStreams(options: { trimmed?: boolean } = {}) {
  const calls: string[] = [];
  const send = async (command: unknown): Promise<unknown> => {
    if (command instanceof GetShardIteratorCommand) {
      calls.push(`iterator ${command.input.ShardIteratorType} ${command.input.SequenceNumber}`);
      if (options.trimmed)
        throw Object.assign(new Error('the records are past retention'), { name: 'TrimmedDataAccessException' });
      const at = SHARD.findIndex((r) => r.dynamodb?.SequenceNumber === command.input.SequenceNumber);
      return { ShardIterator: String(at) };
    }
    if (command instanceof GetRecordsCommand) {
      const at = Number(command.input.ShardIterator);
      calls.push(`records ${at}`);
      const next = at + 2;
      return { Records: SHARD.slice(at, next), ...(next < SHARD.length ? { NextShardIterator: String(next) } : {}) };
    }
    throw new Error('unexpected command');
  };
  return { client: { send } as unknown as Parameters<typeof createDynamoStreamReader>[0]['client'], calls };
}

const letterFor = (id: string, start: string, end: string, firstRecordAt: string): DeadLetter => ({
  messageId: id,
  receipt: `receipt-${id}`,
  body: JSON.stringify({
    requestContext: { condition: 'RetryAttemptsExhausted', approximateInvokeCount: 11 },
    responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
    version: '1.0',
    timestamp: firstRecordAt,
    DDBStreamBatchInfo: {
      shardId: 'shardId-00000001',
      startSequenceNumber: start,
      endSequenceNumber: end,
      approximateArrivalOfFirstRecord: firstRecordAt,
      approximateArrivalOfLastRecord: firstRecordAt,
      batchSize: 2,
      streamArn: STREAM,
    },
  }),
});

function fakeQueue(letters: DeadLetter[]): DeadLetterQueue & { deleted: string[]; hidden: number[] } {
  const visible = [...letters];
  const deleted: string[] = [];
  const hidden: number[] = [];
  return {
    deleted,
    hidden,
    async receive(max, hideSeconds) {
      hidden.push(hideSeconds);
      return visible.splice(0, max);
    },
    async delete(letter) {
      deleted.push(letter.messageId);
    },
  };
}

function harness(letters: DeadLetter[], streams = fakeStreams()) {
  const published: DomainEvent[] = [];
  const recorded: string[] = [];
  const reported: { message: string; context: Readonly<Record<string, unknown>> }[] = [];
  const counted: [string, number, unknown][] = [];
  const queue = fakeQueue(letters);
  const relay = createOutboxRelay({
    events: {
      publish: async (events) => {
        published.push(...events);
      },
    },
    store: {
      recordEvents: async (entries) => {
        recorded.push(...entries.map((e) => e.id));
      },
      restoreAnnouncements: async (entries) => [...entries],
    },
  });
  const redrive = createOutboxRedrive({
    queue,
    stream: createDynamoStreamReader({ client: streams.client, clock: () => NOW }),
    consume: createStreamBatchConsumer({ relay, retention: { purgeRun: async () => 0 } }),
    clock: () => NOW,
    metrics: { count: (name, value, dimensions) => counted.push([name, value, dimensions]), duration: () => {} },
    log: { error: (message, context) => reported.push({ message, context }), warn: () => {} },
  });
  return { redrive, queue, published, recorded, reported, counted, calls: streams.calls };
}

describe('the outbox redrive', () => {
  it('reads a dead letter’s batch back from the stream, relays it and deletes the message', async () => {
    const h = harness([letterFor('m1', '200', '1000', '2026-12-02T11:00:00Z')]);
    const report = await h.redrive.redrive();

    expect(report).toEqual({
      letters: 1,
      redriven: 1,
      announcements: 2,
      events: 2,
      expired: 0,
      unreadable: 0,
      failed: 0,
    });
    // From the batch's first record to its last, across pages; nothing before it, nothing after it.
    expect(h.calls).toEqual(['iterator AT_SEQUENCE_NUMBER 200', 'records 1', 'records 3']);
    expect(h.recorded).toEqual(['e1', 'e2']);
    expect(h.published.map((event) => event.detail.runId)).toEqual(['r1', 'r2']);
    expect(h.queue.deleted).toEqual(['m1']);
    expect(h.counted).toEqual([['OutboxRedriven', 1, undefined]]);
    expect(h.reported).toEqual([]);
  });

  it('keeps and reports a dead letter whose records are past the stream’s 24 hours, reading nothing', async () => {
    const h = harness([letterFor('old', '100', '200', '2026-12-01T11:59:00Z')]);
    const report = await h.redrive.redrive();

    expect(report).toMatchObject({ letters: 1, redriven: 0, expired: 1 });
    expect(h.calls).toEqual([]);
    expect(h.queue.deleted).toEqual([]);
    expect(h.published).toEqual([]);
    expect(h.counted).toEqual([['OutboxDeadLettersStuck', 1, { reason: 'expired' }]]);
    expect(h.reported).toHaveLength(1);
    expect(h.reported[0]?.context).toMatchObject({ messageId: 'old', batch: { startSequenceNumber: '100' } });
  });

  it('keeps and reports a dead letter the stream says it trimmed', async () => {
    const h = harness([letterFor('trimmed', '100', '200', '2026-12-02T11:00:00Z')], fakeStreams({ trimmed: true }));
    const report = await h.redrive.redrive();

    expect(report).toMatchObject({ redriven: 0, expired: 1 });
    expect(h.queue.deleted).toEqual([]);
    expect(h.reported[0]?.context).toMatchObject({ error: { name: 'StreamRecordsExpiredError' } });
  });

  it('keeps a batch whose relay fails again, for the next pass, and goes on with the others', async () => {
    const h = harness([
      letterFor('bad', '100', '100', '2026-12-02T11:00:00Z'),
      letterFor('good', '1100', '1100', '2026-12-02T11:00:00Z'),
    ]);
    let first = true;
    const failing = createOutboxRedrive({
      queue: h.queue,
      stream: createDynamoStreamReader({ client: fakeStreams().client, clock: () => NOW }),
      consume: async (records) => {
        if (first) {
          first = false;
          throw new Error('the bus is down');
        }
        return { announcements: records.length, events: records.length, expiredRuns: 0 };
      },
      clock: () => NOW,
      log: { error: () => {}, warn: () => {} },
    });
    expect(await failing.redrive()).toMatchObject({ letters: 2, redriven: 1, failed: 1 });
    expect(h.queue.deleted).toEqual(['good']);
  });

  it('keeps and reports a message that names no stream batch', async () => {
    const h = harness([{ messageId: 'junk', receipt: 'r', body: '{"hello":1}' }]);
    expect(await h.redrive.redrive()).toMatchObject({ unreadable: 1, redriven: 0 });
    expect(h.queue.deleted).toEqual([]);
    expect(h.counted).toEqual([['OutboxDeadLettersStuck', 1, { reason: 'unreadable' }]]);
  });

  it('hides what it receives longer than a pass runs, and stops when the queue is empty', async () => {
    const h = harness([]);
    expect(await h.redrive.redrive()).toMatchObject({ letters: 0 });
    expect(h.queue.hidden).toEqual([120]);
  });
});
