/**
 * The outbox Lambda: the table's change stream (DynamoDB Streams, NEW_AND_OLD_IMAGES) through an event source
 * mapping whose filter passes only records that carry an outbox (OUTBOX_STREAM_FILTER) and run items TTL removed
 * (EXPIRED_RUN_STREAM_FILTER). Each batch is relayed: its announcements are published on the bus and recorded in the
 * runs' audit logs; the rest of each expired run is deleted (shared/adapters/aws/dynamo-retention.ts). A batch that fails throws, and
 * Lambda delivers it again (bisecting it, so one bad record cannot hold the others back); what still fails after
 * the retries goes to the outbox's dead-letter queue. Delivery is therefore at least once, and every consumer is
 * idempotent.
 *
 * Environment: CAIRN_TABLE_NAME, CAIRN_EVENT_BUS_NAME (required).
 */
import { z } from 'zod';
import type { Env } from '../shared/api/lambda-support.ts';
import { ValidationError } from '../shared/errors.ts';
import { expiredRunOf } from '../shared/events/expired-runs.ts';
import type { StreamRecord } from '../shared/events/outbox.ts';
import type { Retention } from '../shared/ports/retention.ts';
import type { OutboxRelay } from '../shared/services/outbox/relay.ts';
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

export interface OutboxHandlerDeps {
  readonly relay: OutboxRelay;
  /** Deletes what remains of a run whose item TTL removed (the stream's other filter: events/expired-runs.ts). */
  readonly retention: Pick<Retention, 'purgeRun'>;
}

export function createHandler(deps: OutboxHandlerDeps) {
  return async (event: unknown): Promise<{ announcements: number; events: number; expiredRuns: number }> => {
    const parsed = streamEventSchema.safeParse(event);
    if (!parsed.success) {
      const message = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      throw new ValidationError(`outbox stream event is invalid: ${message}`, [{ code: 'E_EVENT', path: '', message }]);
    }
    const records = parsed.data.Records as StreamRecord[];
    // Purged before the batch's announcements are relayed; a failure throws and the whole batch comes again, which
    // both sides take as a repeat.
    const expired = records.flatMap((record) => expiredRunOf(record) ?? []);
    for (const run of expired) await deps.retention.purgeRun(run.runId, run.runKey, run.tenant);
    return { ...(await deps.relay.relay(records)), expiredRuns: expired.length };
  };
}

/** The relay of the container's root, built on the first invocation (functions/root.ts). */
export function defaultDeps(env: Env = process.env): OutboxHandlerDeps {
  const root = lambdaRoot(env);
  return { relay: root.relay, retention: root.retention };
}

export const handler = lazyHandler('outbox', () => createHandler(defaultDeps()));
