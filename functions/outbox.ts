/**
 * The outbox Lambda: the table's change stream (DynamoDB Streams, NEW_AND_OLD_IMAGES) through an event source
 * mapping whose filter passes only records that carry an outbox (OUTBOX_STREAM_FILTER). Each batch is relayed:
 * its announcements are published on the bus and recorded in the runs' audit logs. A batch that fails throws, and
 * Lambda delivers it again (bisecting it, so one bad record cannot hold the others back); what still fails after
 * the retries goes to the outbox's dead-letter queue. Delivery is therefore at least once, and every consumer is
 * idempotent.
 *
 * Environment: CAIRN_TABLE_NAME, CAIRN_EVENT_BUS_NAME (required).
 */
import { z } from 'zod';
import type { Env } from '../shared/api/lambda-support.ts';
import { ValidationError } from '../shared/errors.ts';
import type { StreamRecord } from '../shared/events/outbox.ts';
import type { OutboxRelay } from '../shared/services/outbox/relay.ts';
import { lambdaRoot, lazyHandler } from './root.ts';

/** The part of a DynamoDB stream event the relay reads; images stay in DynamoDB's attribute-value form. */
const streamEventSchema = z.object({
  Records: z.array(
    z.object({
      eventName: z.string().optional(),
      dynamodb: z
        .object({
          NewImage: z.record(z.string(), z.unknown()).optional(),
          OldImage: z.record(z.string(), z.unknown()).optional(),
        })
        .optional(),
    }),
  ),
});

export interface OutboxHandlerDeps {
  readonly relay: OutboxRelay;
}

export function createHandler(deps: OutboxHandlerDeps) {
  return async (event: unknown): Promise<{ announcements: number; events: number }> => {
    const parsed = streamEventSchema.safeParse(event);
    if (!parsed.success) {
      const message = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new ValidationError(`outbox stream event is invalid: ${message}`, [{ code: 'E_EVENT', path: '', message }]);
    }
    return deps.relay.relay(parsed.data.Records as StreamRecord[]);
  };
}

/** The relay of the container's root, built on the first invocation (functions/root.ts). */
export function defaultDeps(env: Env = process.env): OutboxHandlerDeps {
  return { relay: lambdaRoot(env).relay };
}

export const handler = lazyHandler('outbox', () => createHandler(defaultDeps()));
