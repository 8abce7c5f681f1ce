/**
 * The deployed outbox redrive's two sources (shared/ports/outbox-redrive.ts). The on-failure queue: the redrive
 * receives the coordinates of the stream batches the relay gave up on and deletes each message once its batch is
 * relayed; a message received and not deleted comes back after its hiding time, so a pass that fails half-way loses
 * nothing. And DynamoDB Streams, from which a batch is read back: an iterator at the batch's first sequence number
 * (`AT_SEQUENCE_NUMBER`), then `GetRecords` pages until its last one, in the record shape the event source mapping
 * delivers, so the relay takes them as it takes a stream event.
 *
 * The range holds every write of the shard between the two numbers, the ones the mapping's filter passed over too:
 * the relay and the expiry purge pick out what is theirs (events/outbox.ts, events/expired-runs.ts). A record the
 * stream has trimmed (older than 24 hours) or a shard it no longer has is `StreamRecordsExpiredError`.
 */
import {
  type _Record,
  type DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
} from '@aws-sdk/client-dynamodb-streams';
import { DeleteMessageCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { StreamReadIncompleteError, StreamRecordsExpiredError } from '../../errors.ts';
import type { StreamRecord } from '../../events/outbox.ts';
import { compareSequenceNumbers, pastRetention, type StreamBatch } from '../../events/stream-dead-letter.ts';
import type { DeadLetter, DeadLetterQueue, StreamBatchReader } from '../../ports/outbox-redrive.ts';

/** GetRecords' own maximum per call. */
const PAGE_LIMIT = 1000;
/** Pages read for one batch before giving up for this pass (a bounded share of the redrive Lambda's time). */
const DEFAULT_MAX_PAGES = 100;
/** What DynamoDB Streams answer for records past retention, or a shard (or stream) that is gone. */
const EXPIRED_NAMES = new Set(['TrimmedDataAccessException', 'ResourceNotFoundException']);

export interface DynamoStreamReaderOptions {
  readonly client: Pick<DynamoDBStreamsClient, 'send'>;
  readonly clock: () => Date;
  readonly maxPages?: number;
}

/** A record as the event source mapping hands it to a function (lower-case `userIdentity`, images as they are). */
export function lambdaShapeOf(record: _Record): StreamRecord {
  const data = record.dynamodb;
  return {
    ...(record.eventName === undefined ? {} : { eventName: record.eventName }),
    dynamodb: {
      ...(data?.Keys === undefined ? {} : { Keys: data.Keys }),
      ...(data?.NewImage === undefined ? {} : { NewImage: data.NewImage }),
      ...(data?.OldImage === undefined ? {} : { OldImage: data.OldImage }),
    },
    ...(record.userIdentity === undefined
      ? {}
      : { userIdentity: { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId } }),
  };
}

export function createDynamoStreamReader(options: DynamoStreamReaderOptions): StreamBatchReader {
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  const context = (batch: StreamBatch) => ({
    streamArn: batch.streamArn,
    shardId: batch.shardId,
    startSequenceNumber: batch.startSequenceNumber,
    endSequenceNumber: batch.endSequenceNumber,
    firstRecordAt: batch.firstRecordAt,
  });
  const expired = (batch: StreamBatch, cause?: unknown) =>
    new StreamRecordsExpiredError(
      `the stream no longer holds the records of shard ${batch.shardId} from ${batch.startSequenceNumber} (first written ${batch.firstRecordAt})`,
      { cause, context: context(batch) },
    );
  // Only the stream's own "gone" answers mean expired; a throttle or a timeout is the SDK's retry's, then the pass's.
  const call = async <T>(batch: StreamBatch, make: () => Promise<T>): Promise<T> => {
    try {
      return await make();
    } catch (error) {
      const name = (error as { name?: unknown } | null)?.name;
      if (typeof name === 'string' && EXPIRED_NAMES.has(name)) throw expired(batch, error);
      throw error;
    }
  };
  return {
    async read(batch) {
      if (pastRetention(batch, options.clock())) throw expired(batch);
      const { ShardIterator } = await call(batch, () =>
        options.client.send(
          new GetShardIteratorCommand({
            StreamArn: batch.streamArn,
            ShardId: batch.shardId,
            ShardIteratorType: 'AT_SEQUENCE_NUMBER',
            SequenceNumber: batch.startSequenceNumber,
          }),
        ),
      );
      const records: StreamRecord[] = [];
      let iterator = ShardIterator;
      for (let page = 0; page < maxPages && iterator !== undefined; page++) {
        const shard = iterator;
        const answer = await call(batch, () =>
          options.client.send(new GetRecordsCommand({ ShardIterator: shard, Limit: PAGE_LIMIT })),
        );
        for (const record of answer.Records ?? []) {
          const sequence = record.dynamodb?.SequenceNumber;
          if (sequence !== undefined && compareSequenceNumbers(sequence, batch.endSequenceNumber) > 0) return records;
          records.push(lambdaShapeOf(record));
          if (sequence === batch.endSequenceNumber) return records;
        }
        iterator = answer.NextShardIterator;
      }
      // A closed shard ends its iterator: everything it held from the start is read.
      if (iterator === undefined) return records;
      throw new StreamReadIncompleteError(
        `shard ${batch.shardId} did not reach ${batch.endSequenceNumber} within ${maxPages} pages`,
        { context: { ...context(batch), read: records.length } },
      );
    },
  };
}

/** ReceiveMessage's own maximum per call. */
const RECEIVE_MAX = 10;

export interface SqsDeadLettersOptions {
  readonly client: Pick<SQSClient, 'send'>;
  readonly queueUrl: string;
}

export function createSqsDeadLetters(options: SqsDeadLettersOptions): DeadLetterQueue {
  return {
    async receive(max, hideSeconds) {
      const answer = await options.client.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: Math.max(1, Math.min(max, RECEIVE_MAX)),
          VisibilityTimeout: hideSeconds,
          // A pass takes what is there now: no long poll holding the Lambda when the queue is empty.
          WaitTimeSeconds: 0,
        }),
      );
      return (answer.Messages ?? []).flatMap((message): DeadLetter[] =>
        message.MessageId === undefined || message.ReceiptHandle === undefined
          ? []
          : [{ messageId: message.MessageId, receipt: message.ReceiptHandle, body: message.Body ?? '' }],
      );
    },
    async delete(letter) {
      await options.client.send(
        new DeleteMessageCommand({ QueueUrl: options.queueUrl, ReceiptHandle: letter.receipt }),
      );
    },
  };
}
