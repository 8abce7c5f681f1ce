/**
 * The outbox's two ends on DynamoDB. `announce` writes an announcement that belongs to no other write as an item of
 * its own (the run's partition, `OUTBOX#<id>`), which the change stream carries like any other announcing write.
 * `recordEvents` is the relay's audit log: one item per event, `EVENT#<at>~<entry id>~<index>`, written in batches
 * (a redelivered entry lands on the same keys, so a repeat changes nothing). No counter: writers never contend.
 */
import { ValidationError } from '../../errors.ts';
import { encodeOutbox, OUTBOX_ATTRIBUTE, type OutboxEntry } from '../../events/outbox.ts';
import type { RunEventRecord, Store } from '../../ports/store.ts';
import { outboxEventKeys, restoreOutboxEvents } from './dynamo-blobs.ts';
import { decodeEvent, ENTITY_ATTRIBUTE, encodeEvent, stringItem } from './dynamo-codec.ts';
import { ExpressionScope } from './dynamo-expressions.ts';
import {
  batchGetItems,
  batchPutItems,
  conditionalPut,
  type DynamoContext,
  queryAll,
  runItemsQuery,
} from './dynamo-ops.ts';
import { itemKeys, PARTITION_KEY, SORT_KEY, SORT_PREFIX } from './table-layout.ts';

type EventOperations = Pick<Store, 'announce' | 'recordEvents' | 'restoreAnnouncements' | 'listEvents'>;

/** A cursor is a seq a listing returned: `<ISO time>~<entry id>~<index>`. */
const SEQ = /^[0-9TZ:.+-]{10,40}~[A-Za-z0-9-]{1,64}~\d{1,4}$/;

export const eventSeq = (entry: OutboxEntry, index: number): string =>
  `${entry.at}~${entry.id}~${String(index).padStart(4, '0')}`;

/** The audit-log records of an announcement, one per event. */
export function eventRecords(entry: OutboxEntry): RunEventRecord[] {
  return entry.events.map((event, index) => {
    const detail = event.detail;
    const stepId = typeof detail.stepId === 'string' ? detail.stepId : undefined;
    const generation = typeof detail.generation === 'number' ? detail.generation : undefined;
    return {
      runId: entry.runId,
      seq: eventSeq(entry, index),
      type: event.type,
      at: entry.at,
      ...(stepId === undefined ? {} : { stepId }),
      ...(generation === undefined ? {} : { generation }),
      detail,
    };
  });
}

export function eventOperations(ctx: DynamoContext): EventOperations {
  return {
    async announce(entry) {
      const scope = new ExpressionScope();
      const item = {
        ...stringItem({ ...itemKeys.outbox(entry.runId, entry.id), [ENTITY_ATTRIBUTE]: 'outbox' }),
        [OUTBOX_ATTRIBUTE]: { S: encodeOutbox(entry) },
      };
      // A repeat of the same announcement finds its item: announced once.
      await conditionalPut(ctx, item, scope, scope.notExists(PARTITION_KEY));
    },

    async recordEvents(entries) {
      await batchPutItems(ctx, entries.flatMap(eventRecords).map(encodeEvent));
    },

    async restoreAnnouncements(entries) {
      const keys = outboxEventKeys(entries);
      if (keys.length === 0) return [...entries];
      return restoreOutboxEvents(entries, await batchGetItems(ctx, keys));
    },

    async listEvents(runId, options = {}) {
      if (options.after !== undefined && !SEQ.test(options.after)) {
        throw new ValidationError(`event cursor must be a seq from an earlier listing, got ${options.after}`, []);
      }
      const { limit } = options;
      if (options.after === undefined) {
        const query = runItemsQuery(runId, SORT_PREFIX.event);
        return (await queryAll(ctx, limit === undefined ? query : { ...query, Limit: limit }, limit)).map(decodeEvent);
      }
      const scope = new ExpressionScope();
      const pk = scope.equals(PARTITION_KEY, { S: itemKeys.runPartition(runId) }, 'pk');
      const from = { S: `${SORT_PREFIX.event}${options.after}` };
      const to = { S: `${SORT_PREFIX.event}\uffff` };
      // BETWEEN is inclusive (a key condition takes one range): the cursor's own event is read and dropped.
      const range = `${scope.name(SORT_KEY)} BETWEEN ${scope.value('from', from)} AND ${scope.value('to', to)}`;
      const read = limit === undefined ? undefined : limit + 1;
      const items = await queryAll(
        ctx,
        {
          KeyConditionExpression: `${pk} AND ${range}`,
          ConsistentRead: true,
          ...(read === undefined ? {} : { Limit: read }),
          ...scope.parts(),
        },
        read,
      );
      const later = items.map(decodeEvent).filter((event) => event.seq !== options.after);
      return limit === undefined ? later : later.slice(0, limit);
    },
  };
}
