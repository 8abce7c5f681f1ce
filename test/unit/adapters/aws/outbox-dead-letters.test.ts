/**
 * Reading a stream batch back from DynamoDB Streams (the redrive's other half is in
 * test/unit/services/outbox/redrive.test.ts): the record shape the event source mapping delivers, a closed shard,
 * a range the bound of pages does not reach, and the on-failure message's coordinates.
 */
import { GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from 'vitest';
import { createDynamoStreamReader, lambdaShapeOf } from '../../../../shared/adapters/aws/outbox-dead-letters.ts';
import { compareSequenceNumbers, pastRetention, streamBatchOf } from '../../../../shared/events/stream-dead-letter.ts';

const NOW = new Date('2026-12-02T12:00:00.000Z');
const batch = {
  streamArn: 'arn:aws:dynamodb:us-east-1:1:table/t/stream/s',
  shardId: 'shard-1',
  startSequenceNumber: '10',
  endSequenceNumber: '90',
  firstRecordAt: '2026-12-02T11:00:00.000Z',
  batchSize: 2,
};

/** A shard whose every page holds one record numbered below the batch's end, and that is closed after `pages`. */
function endless(pages: number) {
  let page = 0;
  const send = async (command: unknown) => {
    if (command instanceof GetShardIteratorCommand) return { ShardIterator: 'it' };
    if (command instanceof GetRecordsCommand) {
      page += 1;
      return {
        Records: [{ eventName: 'MODIFY', dynamodb: { SequenceNumber: String(10 + page) } }],
        ...(page < pages ? { NextShardIterator: 'it' } : {}),
      };
    }
    throw new Error('unexpected command');
  };
  return { send } as unknown as Parameters<typeof createDynamoStreamReader>[0]['client'];
}

describe('createDynamoStreamReader', () => {
  it('returns what a closed shard held from the start when it ends before the batch’s last number', async () => {
    const reader = createDynamoStreamReader({ client: endless(3), clock: () => NOW, maxPages: 10 });
    expect(await reader.read(batch)).toHaveLength(3);
  });

  it('fails retryably when its bound of pages does not reach the batch’s last record', async () => {
    const reader = createDynamoStreamReader({ client: endless(1000), clock: () => NOW, maxPages: 4 });
    await expect(reader.read(batch)).rejects.toMatchObject({
      name: 'StreamReadIncompleteError',
      retryable: true,
      context: { code: 'E_STREAM_READ_INCOMPLETE', shardId: 'shard-1', read: 4 },
    });
  });

  it('calls nothing for a batch past the stream’s 24 hours', async () => {
    const reader = createDynamoStreamReader({ client: endless(0), clock: () => new Date('2026-12-03T11:00:00Z') });
    await expect(reader.read(batch)).rejects.toMatchObject({ name: 'StreamRecordsExpiredError', retryable: false });
  });
});

describe('lambdaShapeOf', () => {
  it('gives a TTL removal the identity the event source mapping delivers', () => {
    expect(
      lambdaShapeOf({
        eventName: 'REMOVE',
        userIdentity: { Type: 'Service', PrincipalId: 'dynamodb.amazonaws.com' },
        dynamodb: { Keys: { PK: { S: 'RUN#r' } }, SequenceNumber: '5' },
      }),
    ).toEqual({
      eventName: 'REMOVE',
      dynamodb: { Keys: { PK: { S: 'RUN#r' } } },
      userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
    });
  });
});

describe('streamBatchOf', () => {
  it('reads the coordinates of the on-failure message and refuses one without them', () => {
    const body = {
      requestContext: { condition: 'RecordAgeExceeded' },
      DDBStreamBatchInfo: {
        shardId: 'shard-1',
        startSequenceNumber: '10',
        endSequenceNumber: '90',
        approximateArrivalOfFirstRecord: '2026-12-02T11:00:00Z',
        approximateArrivalOfLastRecord: '2026-12-02T11:00:01Z',
        batchSize: 2,
        streamArn: batch.streamArn,
      },
    };
    expect(streamBatchOf(JSON.stringify(body))).toEqual({ ok: true, condition: 'RecordAgeExceeded', batch });
    expect(streamBatchOf('{"DDBStreamBatchInfo":{}}')).toMatchObject({ ok: false });
    expect(streamBatchOf('not json')).toEqual({ ok: false, reason: 'the message is not JSON' });
  });

  it('compares sequence numbers as numbers and tells when the stream dropped a batch', () => {
    expect(compareSequenceNumbers('9', '10')).toBe(-1);
    expect(compareSequenceNumbers('300000000000000000000000001', '300000000000000000000000001')).toBe(0);
    expect(pastRetention(batch, new Date('2026-12-03T10:59:59Z'))).toBe(false);
    expect(pastRetention(batch, new Date('2026-12-03T11:00:00Z'))).toBe(true);
  });
});
