/**
 * The outbox's two ends on DynamoDB. `announce` writes an announcement that belongs to no other write as an item of
 * its own (the run's partition, `OUTBOX#<id>`), which the change stream carries like any other announcing write.
 * `recordEvents` is the relay's audit log: one item per event, written in batches (a redelivered entry lands on the
 * same keys, so a repeat changes nothing). No counter: writers never contend.
 *
 * An event's key is its place in the run: `EVENT#v<version>~<index>`, the version of the batch that decided it (its
 * announcement's id is `<runId>-v<version>`, shared/adapters/aws/dynamo-run-log.ts) and its index in the batch. A
 * run's batches are committed one after another, so a key that lands later sorts later: a client tailing the log
 * with `after=` misses nothing. (Keyed by the writer's clock, a batch written a moment late landed before a cursor
 * already read past it.) An announcement that names no version, and events recorded before versions keyed the log,
 * keep the old key `<at>~<entry id>~<index>`, which sorts before every versioned one (a digit before `v`).
 */
import { ValidationError } from '../../errors.ts';
import { encodeOutbox, OUTBOX_ATTRIBUTE, type OutboxEntry } from '../../events/outbox.ts';
import type { RunEventRecord, Store } from '../../ports/store.ts';
import { outboxEventKeys, restoreOutboxEvents } from './dynamo-blobs.ts';
import { decodeEvent, ENTITY_ATTRIBUTE, encodeEvent, stringItem } from './dynamo-codec.ts';
import { ExpressionScope } from './dynamo-expressions.ts';
import { batchGetItems, batchPutItems, conditionalPut, type DynamoContext, queryAll } from './dynamo-ops.ts';
import { itemKeys, PARTITION_KEY, SORT_KEY, SORT_PREFIX } from './table-layout.ts';

type EventOperations = Pick<Store, 'announce' | 'recordEvents' | 'restoreAnnouncements' | 'listEvents'>;

/** A cursor is a seq a listing returned: `v<version>~<index>`, or the clock-keyed `<ISO time>~<entry id>~<index>`. */
const SEQ = /^(v\d{10}~\d{4}|[0-9TZ:.+-]{10,40}~[A-Za-z0-9-]{1,64}~\d{1,4})$/;

/** The batch version an announcement of the run's log names in its id (`<runId>-v<version>`), if it names one. */
export function announcedVersion(entry: Pick<OutboxEntry, 'id' | 'runId'>): number | undefined {
  const prefix = `${entry.runId}-v`;
  if (!entry.id.startsWith(prefix)) return undefined;
  const digits = entry.id.slice(prefix.length);
  return /^\d{1,10}$/.test(digits) ? Number(digits) : undefined;
}

export function eventSeq(entry: OutboxEntry, index: number): string {
  const place = String(index).padStart(4, '0');
  const version = announcedVersion(entry);
  return version === undefined ? `${entry.at}~${entry.id}~${place}` : `v${String(version).padStart(10, '0')}~${place}`;
}

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
      const { limit, stepId } = options;
      const scope = new ExpressionScope();
      const pk = scope.equals(PARTITION_KEY, { S: itemKeys.runPartition(runId) }, 'pk');
      const from = { S: `${SORT_PREFIX.event}${options.after ?? ''}` };
      const to = { S: `${SORT_PREFIX.event}\uffff` };
      // BETWEEN is inclusive (a key condition takes one range): the cursor's own event is read and dropped.
      const range = `${scope.name(SORT_KEY)} BETWEEN ${scope.value('from', from)} AND ${scope.value('to', to)}`;
      // A filter applies after a page is read, so with one no Limit is given: `limit` then stops the collecting.
      const filter = stepId === undefined ? undefined : scope.equals('stepId', { S: stepId }, 'stepId');
      const read = limit === undefined ? undefined : limit + 1;
      const items = await queryAll(
        ctx,
        {
          KeyConditionExpression: `${pk} AND ${range}`,
          ConsistentRead: true,
          ...(filter === undefined ? {} : { FilterExpression: filter }),
          ...(read === undefined || filter !== undefined ? {} : { Limit: read }),
          ...scope.parts(),
        },
        read,
      );
      const later = items.map(decodeEvent).filter((event) => event.seq !== options.after);
      return limit === undefined ? later : later.slice(0, limit);
    },
  };
}
