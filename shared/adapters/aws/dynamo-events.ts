/**
 * The run's event log on DynamoDB: one item per event, `EVENT#<seq>` in the run's partition, with `seq` a per-run
 * counter that orders events by when they were appended, whatever the writers' clocks say.
 *
 * Slots are taken without a counter item: an append puts its event at the slot after the newest event, with
 * `attribute_not_exists`; a lost condition means another writer took that slot, so the writer reads the newest slot
 * again and retries. Writers only ever try the slot after a slot they have seen taken, so slots fill up without
 * holes and a successful put always lands after every event appended before it: string order of `seq` = append
 * order. A process remembers the next slot per run and serializes its own appends to a run, so a warm writer (the
 * embedded stack, a warm Lambda) appends with one conditional put and reads only after another writer got there.
 */
import { ConflictError, ValidationError } from '../../errors.ts';
import type { NewRunEvent, RunEventRecord, Store } from '../../ports/store.ts';
import { decodeEvent, encodeEvent } from './dynamo-codec.ts';
import { ExpressionScope } from './dynamo-expressions.ts';
import { conditionalPut, type DynamoContext, queryAll, runItemsQuery } from './dynamo-ops.ts';
import { EVENT_SEQ_DIGITS, formatEventSeq, itemKeys, PARTITION_KEY, SORT_KEY, SORT_PREFIX } from './table-layout.ts';

/** Runs whose next slot a process remembers (the oldest is forgotten first; forgetting costs one read later). */
const REMEMBERED_RUNS = 256;
/** Lost slots in a row before an append gives up (only a storm of concurrent writers to one run gets there). */
const MAX_SLOT_TRIES = 25;

interface RunSequence {
  /** The slot to try next; undefined: read the newest slot first. */
  next: number | undefined;
  /** This process's appends to the run, one after the other. */
  tail: Promise<unknown>;
}

type EventOperations = Pick<Store, 'appendEvents' | 'listEvents'>;

export function eventOperations(ctx: DynamoContext): EventOperations {
  const sequences = new Map<string, RunSequence>();

  const sequenceOf = (runId: string): RunSequence => {
    let sequence = sequences.get(runId);
    if (sequence) {
      // Refresh its place in the insertion order: the map doubles as an LRU list.
      sequences.delete(runId);
    } else {
      sequence = { next: undefined, tail: Promise.resolve() };
      if (sequences.size >= REMEMBERED_RUNS) sequences.delete(sequences.keys().next().value ?? '');
    }
    sequences.set(runId, sequence);
    return sequence;
  };

  const newestSeq = async (runId: string): Promise<number> => {
    const [item] = await queryAll(
      ctx,
      { ...runItemsQuery(runId, SORT_PREFIX.event), ScanIndexForward: false, Limit: 1 },
      1,
    );
    const sortKey = item?.[SORT_KEY]?.S;
    if (sortKey === undefined) return 0;
    const seq = Number(sortKey.slice(SORT_PREFIX.event.length));
    if (!Number.isSafeInteger(seq)) throw new ConflictError(`event log of run ${runId} holds an unreadable seq`);
    return seq;
  };

  const appendOne = async (sequence: RunSequence, event: NewRunEvent): Promise<RunEventRecord> => {
    for (let tries = 0; tries < MAX_SLOT_TRIES; tries++) {
      sequence.next ??= (await newestSeq(event.runId)) + 1;
      const record: RunEventRecord = { ...event, seq: formatEventSeq(sequence.next) };
      const scope = new ExpressionScope();
      if (await conditionalPut(ctx, encodeEvent(record), scope, scope.notExists(PARTITION_KEY))) {
        sequence.next += 1;
        return record;
      }
      sequence.next = undefined; // someone else took the slot: look again
    }
    throw new ConflictError(`could not find a free event slot in run ${event.runId}`, {
      context: { runId: event.runId },
      retryable: true,
    });
  };

  const appendToRun = (runId: string, events: readonly NewRunEvent[]): Promise<RunEventRecord[]> => {
    const sequence = sequenceOf(runId);
    const appended = sequence.tail.then(async () => {
      const stored: RunEventRecord[] = [];
      try {
        for (const event of events) stored.push(await appendOne(sequence, event));
      } catch (error) {
        sequence.next = undefined; // unsure what landed: read the newest slot next time
        throw error;
      }
      return stored;
    });
    sequence.tail = appended.catch(() => undefined);
    return appended;
  };

  return {
    async appendEvents(events) {
      const byRun = new Map<string, number[]>();
      for (const [i, event] of events.entries()) byRun.set(event.runId, [...(byRun.get(event.runId) ?? []), i]);
      const stored: RunEventRecord[] = [];
      await Promise.all(
        [...byRun].map(async ([runId, indexes]) => {
          const records = await appendToRun(
            runId,
            indexes.map((index) => events[index] as NewRunEvent),
          );
          for (const [offset, index] of indexes.entries()) stored[index] = records[offset] as RunEventRecord;
        }),
      );
      return stored;
    },

    async listEvents(runId, options = {}) {
      if (options.after !== undefined && !/^\d{1,15}$/.test(options.after)) {
        throw new ValidationError(`event cursor must be a seq, got ${options.after}`, []);
      }
      if (options.after === undefined)
        return (await queryAll(ctx, runItemsQuery(runId, SORT_PREFIX.event))).map(decodeEvent);
      const scope = new ExpressionScope();
      const pk = scope.equals(PARTITION_KEY, { S: itemKeys.runPartition(runId) }, 'pk');
      const from = { S: `${SORT_PREFIX.event}${formatEventSeq(Number(options.after) + 1)}` };
      const to = { S: `${SORT_PREFIX.event}${'9'.repeat(EVENT_SEQ_DIGITS)}` };
      const range = `${scope.name(SORT_KEY)} BETWEEN ${scope.value('from', from)} AND ${scope.value('to', to)}`;
      const items = await queryAll(ctx, {
        KeyConditionExpression: `${pk} AND ${range}`,
        ConsistentRead: true,
        ...scope.parts(),
      });
      return items.map(decodeEvent);
    },
  };
}
