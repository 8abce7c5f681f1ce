/**
 * What a DynamoDB request costs, and where, read off the request and its answer as dynalite sees them (the wire
 * JSON: `{ "S": … }` attribute values): which partitions it touches (the table's partition key value, or an index's
 * for a query on an index and for the index entry a put writes), of which kind (read or write), and how many units
 * each consumed. Single-item requests and queries are charged what dynalite reports as consumed capacity (DynamoDB's
 * own rules: the larger of the item before and after a write, a query's items evaluated before any filter); a batch
 * is charged per item it names (a put by the item's size; a delete, or a key that found no item, at the minimum).
 * Scans are not charged to a partition (they cross them all).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { dynamoItemSize } from '../../../shared/adapters/local/dynalite-item-size.ts';
import { readUnits, type UnitKind, writeUnits } from './partition-throughput.ts';

type Wire = Record<string, unknown>;
type Item = Record<string, AttributeValue>;

export interface KeySchema {
  /** The table's partition key attribute. */
  readonly hashKey: string;
  /** Each global secondary index's partition key attribute, by index name. */
  readonly indexHashKeys: Readonly<Record<string, string>>;
}

/** One partition a request touches: `table` is the table or `table/index/<name>`. */
export interface Touch {
  readonly kind: UnitKind;
  readonly key: string;
  readonly resource: string;
}

/** The operations charged to partitions. */
export const SINGLE_ITEM = new Set(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query']);
export const BATCHES = new Set(['BatchGetItem', 'BatchWriteItem']);

const valueText = (value: unknown): string | undefined => (value === undefined ? undefined : JSON.stringify(value));

/** The key a partition's units are counted under: the resource and its partition key value. */
export const partition = (resource: string, value: unknown): string | undefined => {
  const text = valueText(value);
  return text === undefined ? undefined : `${resource}\u0000${text}`;
};

/** A query's partition key value: the `hashKey = :value` term of its key condition. */
function queryHashValue(data: Wire, hashKey: string): unknown {
  const expression = String(data.KeyConditionExpression ?? '');
  const names = (data.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (data.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const match of expression.matchAll(/([#\w.]+)\s*=\s*(:\w+)/g)) {
    const name = match[1] as string;
    if ((names[name] ?? name) === hashKey) return values[match[2] as string];
  }
  return undefined;
}

/** The index partitions a new item is written to (its index keys, when it has them). */
function indexTouches(table: string, item: Item, schema: KeySchema): Touch[] {
  return Object.entries(schema.indexHashKeys).flatMap(([index, attribute]) => {
    const resource = `${table}/index/${index}`;
    const key = partition(resource, item[attribute]);
    return key === undefined ? [] : [{ kind: 'write' as const, key, resource }];
  });
}

/** The partitions a single-item request or a query touches (none for what is not charged). */
export function touchesOf(operation: string, data: Wire, schema: KeySchema): Touch[] {
  const table = String(data.TableName ?? '');
  if (operation === 'Query') {
    const index = typeof data.IndexName === 'string' ? data.IndexName : undefined;
    const resource = index === undefined ? table : `${table}/index/${index}`;
    const hashKey = index === undefined ? schema.hashKey : schema.indexHashKeys[index];
    const key = hashKey === undefined ? undefined : partition(resource, queryHashValue(data, hashKey));
    return key === undefined ? [] : [{ kind: 'read', key, resource }];
  }
  if (operation === 'PutItem') {
    const item = (data.Item ?? {}) as Item;
    const key = partition(table, item[schema.hashKey]);
    return [
      ...(key === undefined ? [] : [{ kind: 'write' as const, key, resource: table }]),
      ...indexTouches(table, item, schema),
    ];
  }
  if (operation === 'GetItem' || operation === 'UpdateItem' || operation === 'DeleteItem') {
    const key = partition(table, ((data.Key ?? {}) as Item)[schema.hashKey]);
    return key === undefined ? [] : [{ kind: operation === 'GetItem' ? 'read' : 'write', key, resource: table }];
  }
  return [];
}

/** The units a single-item request or query consumed: what dynalite reported, at least the minimum. */
export function consumedUnits(operation: string, data: Wire, answer: Wire | undefined): number {
  const reported = (answer?.ConsumedCapacity as { CapacityUnits?: number } | undefined)?.CapacityUnits;
  const read = operation === 'GetItem' || operation === 'Query';
  const minimum = read ? readUnits(0, data.ConsistentRead === true) : writeUnits(0);
  return Math.max(minimum, reported ?? 0);
}

/** One item of a batch: where it goes and what it costs (known before it runs, as a batch's units are estimated). */
export interface BatchEntry {
  readonly table: string;
  readonly index: number;
  readonly touches: readonly Touch[];
  readonly units: number;
}

/** The items a batch names, in order, each with its partitions and (for a write) its units. */
export function batchEntries(operation: string, data: Wire, schema: KeySchema): BatchEntry[] {
  const requestItems = (data.RequestItems ?? {}) as Record<string, unknown>;
  const entries: BatchEntry[] = [];
  for (const [table, request] of Object.entries(requestItems)) {
    if (operation === 'BatchGetItem') {
      const { Keys = [], ConsistentRead } = request as { Keys?: Item[]; ConsistentRead?: boolean };
      Keys.forEach((item, index) => {
        const key = partition(table, item[schema.hashKey]);
        const touches = key === undefined ? [] : [{ kind: 'read' as const, key, resource: table }];
        entries.push({ table, index, touches, units: readUnits(0, ConsistentRead === true) });
      });
      continue;
    }
    (request as Wire[]).forEach((write, index) => {
      const put = (write.PutRequest as { Item?: Item } | undefined)?.Item;
      const target = put ?? (write.DeleteRequest as { Key?: Item } | undefined)?.Key ?? {};
      const key = partition(table, target[schema.hashKey]);
      const touches = [
        ...(key === undefined ? [] : [{ kind: 'write' as const, key, resource: table }]),
        ...(put === undefined ? [] : indexTouches(table, put, schema)),
      ];
      entries.push({
        table,
        index,
        touches,
        units: put === undefined ? writeUnits(0) : writeUnits(dynamoItemSize(put)),
      });
    });
  }
  return entries;
}

/** The batch with only the entries kept (by table and index), in their order. */
export function batchWith(operation: string, data: Wire, kept: readonly BatchEntry[]): Wire {
  const requestItems = (data.RequestItems ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [table, request] of Object.entries(requestItems)) {
    const indexes = new Set(kept.filter((entry) => entry.table === table).map((entry) => entry.index));
    if (indexes.size === 0) continue;
    if (operation === 'BatchGetItem') {
      const { Keys = [], ...rest } = request as { Keys?: unknown[] };
      out[table] = { ...rest, Keys: Keys.filter((_, index) => indexes.has(index)) };
    } else out[table] = (request as unknown[]).filter((_, index) => indexes.has(index));
  }
  return { ...data, RequestItems: out };
}

/** The part of a batch not processed, in the shape DynamoDB answers it (UnprocessedKeys / UnprocessedItems). */
export function unprocessedOf(operation: string, data: Wire, left: readonly BatchEntry[]): Wire {
  return (batchWith(operation, data, left).RequestItems ?? {}) as Wire;
}

/** A read's units by the size of the items a batch get returned, one item at a time. */
export function batchReadUnits(items: readonly Item[], consistent: boolean): number[] {
  return items.map((item) => readUnits(dynamoItemSize(item), consistent));
}
