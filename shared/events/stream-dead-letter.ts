/**
 * The message a DynamoDB stream's event source mapping sends its on-failure destination for a batch it gave up on
 * (retries spent, or the records older than the mapping's maximum age): the batch's coordinates, never its records.
 *
 *   { requestContext: { condition: 'RetryAttemptsExhausted' | 'RecordAgeExceeded', approximateInvokeCount, … },
 *     responseContext: { … }, version: '1.0', timestamp,
 *     DDBStreamBatchInfo: { shardId, startSequenceNumber, endSequenceNumber, approximateArrivalOfFirstRecord,
 *                           approximateArrivalOfLastRecord, batchSize, streamArn } }
 *
 * Pure: the queue's body in, the batch out (or why it is unreadable).
 */
import { z } from 'zod';

/** Where a failed stream batch lies: one shard's records from the first sequence number to the last, inclusive. */
export interface StreamBatch {
  readonly streamArn: string;
  readonly shardId: string;
  readonly startSequenceNumber: string;
  readonly endSequenceNumber: string;
  /** When the batch's first record reached the stream (ISO 8601): the stream keeps it 24 hours from then. */
  readonly firstRecordAt: string;
  readonly batchSize: number;
}

/** How long DynamoDB Streams keep a record. */
export const STREAM_RETENTION_HOURS = 24;

const onFailureSchema = z.object({
  requestContext: z.object({ condition: z.string().optional() }).partial().optional(),
  DDBStreamBatchInfo: z.object({
    shardId: z.string().min(1),
    startSequenceNumber: z.string().regex(/^\d+$/),
    endSequenceNumber: z.string().regex(/^\d+$/),
    approximateArrivalOfFirstRecord: z.string().refine((text) => !Number.isNaN(Date.parse(text))),
    batchSize: z.number().int().nonnegative(),
    streamArn: z.string().startsWith('arn:'),
  }),
});

export type DeadLetterBatch =
  | { readonly ok: true; readonly batch: StreamBatch; readonly condition: string | undefined }
  | { readonly ok: false; readonly reason: string };

export function streamBatchOf(body: string): DeadLetterBatch {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'the message is not JSON' };
  }
  const parsed = onFailureSchema.safeParse(json);
  if (!parsed.success)
    return { ok: false, reason: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
  const info = parsed.data.DDBStreamBatchInfo;
  return {
    ok: true,
    condition: parsed.data.requestContext?.condition,
    batch: {
      streamArn: info.streamArn,
      shardId: info.shardId,
      startSequenceNumber: info.startSequenceNumber,
      endSequenceNumber: info.endSequenceNumber,
      firstRecordAt: new Date(info.approximateArrivalOfFirstRecord).toISOString(),
      batchSize: info.batchSize,
    },
  };
}

/** Whether the stream has dropped (or is about to drop, within `marginMs`) the batch's first record. */
export const pastRetention = (batch: StreamBatch, now: Date, marginMs = 0): boolean =>
  now.getTime() + marginMs >= Date.parse(batch.firstRecordAt) + STREAM_RETENTION_HOURS * 3_600_000;

/** Sequence numbers are decimal strings of up to 40 digits: compared as numbers, not as text. */
export const compareSequenceNumbers = (a: string, b: string): number => {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
};
