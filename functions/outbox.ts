/**
 * The outbox Lambda: the table's change stream (DynamoDB Streams, NEW_AND_OLD_IMAGES) through an event source
 * mapping whose filter passes only records that carry an outbox (OUTBOX_STREAM_FILTER) and run items TTL removed
 * (EXPIRED_RUN_STREAM_FILTER). Each batch is handed to the stream batch consumer: the rest of each expired run is
 * deleted (shared/adapters/aws/dynamo-retention.ts), then its announcements are published on the bus and recorded in
 * the runs' audit logs. A batch that fails throws, and Lambda delivers it again (bisecting it, so one bad record
 * cannot hold the others back); what still fails after the retries has its coordinates sent to the outbox's
 * on-failure queue. Delivery is therefore at least once, and every consumer is idempotent.
 *
 * The same function is the outbox redrive: a scheduled EventBridge event (every REDRIVE_EVERY_SECONDS) reads the
 * on-failure queue and relays each batch again from the stream (shared/services/outbox/redrive.ts).
 *
 * Environment: CAIRN_TABLE_NAME, CAIRN_EVENT_BUS_NAME, CAIRN_OUTBOX_DEAD_LETTERS_URL (required).
 */
import { z } from 'zod';
import type { Env } from '../shared/api/lambda-support.ts';
import { ValidationError } from '../shared/errors.ts';
import type { StreamRecord } from '../shared/events/outbox.ts';
import type { OutboxRedrive, RedriveReport } from '../shared/services/outbox/redrive.ts';
import type { StreamBatchConsumer, StreamBatchOutcome } from '../shared/services/outbox/stream-batch.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

/** The part of a DynamoDB stream event the relay reads; images stay in DynamoDB's attribute-value form. */
const streamEventSchema = z.object({
  Records: z.array(
    z.object({
      eventName: z.string().optional(),
      dynamodb: z
        .object({
          Keys: z.record(z.string(), z.unknown()).optional(),
          NewImage: z.record(z.string(), z.unknown()).optional(),
          OldImage: z.record(z.string(), z.unknown()).optional(),
        })
        .optional(),
      userIdentity: z.object({ type: z.string().optional(), principalId: z.string().optional() }).optional(),
    }),
  ),
});

/** The schedule's event (an EventBridge rule's `Scheduled Event`): the redrive's turn. */
const scheduledSchema = z.object({ source: z.literal('aws.events'), 'detail-type': z.literal('Scheduled Event') });

export interface OutboxHandlerDeps {
  /** The expiry purge, then the relay (shared/services/outbox/stream-batch.ts). */
  readonly streamBatch: StreamBatchConsumer;
  readonly redrive: Pick<OutboxRedrive, 'redrive'>;
}

export function createHandler(deps: OutboxHandlerDeps) {
  return async (event: unknown): Promise<StreamBatchOutcome | RedriveReport> => {
    if (scheduledSchema.safeParse(event).success) return deps.redrive.redrive();
    const parsed = streamEventSchema.safeParse(event);
    if (!parsed.success) {
      const message = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new ValidationError(`outbox stream event is invalid: ${message}`, [{ code: 'E_EVENT', path: '', message }]);
    }
    return deps.streamBatch(parsed.data.Records as StreamRecord[]);
  };
}

/** The consumer and the redrive of the container's root, built on the first invocation (functions/root.ts). */
export function defaultDeps(env: Env = process.env): OutboxHandlerDeps {
  const root = lambdaRoot(env);
  return { streamBatch: (records) => root.streamBatch(records), redrive: { redrive: () => root.redrive.redrive() } };
}

export const handler = lazyHandler('outbox', () => createHandler(defaultDeps()));
