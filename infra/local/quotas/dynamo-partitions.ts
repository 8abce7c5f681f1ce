/**
 * DynamoDB's per-partition throughput in the embedded store: a wrapper around the in-process dynalite's calls (both
 * the fast path and the SDK's path, see ../dynalite-in-process.ts) that refuses a request whose partition is out of
 * units with the error DynamoDB gives, as the wire answer the SDK then reads: a 400 `ThrottlingException` (an
 * on-demand table's answer for a hot key; a provisioned table answers ProvisionedThroughputExceededException, which
 * cairn treats the same) with its `throttlingReasons` (`TableWriteKeyRangeThroughputExceeded`, ...). So the SDK's
 * own retries (standard mode, throttling backoff) run as they do on AWS, and what reaches the store adapter after
 * them is what AWS's would see. A batch whose items are partly throttled answers the rest as unprocessed, as
 * DynamoDB does; only a batch with nothing processed is refused. Units are counted by dynamo-requests.ts.
 */

import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { dynamoItemSize } from '../../../shared/adapters/local/dynalite-item-size.ts';
import type { CallAnswer } from '../dynamo-fast-path.ts';
import {
  BATCHES,
  type BatchEntry,
  batchEntries,
  batchWith,
  consumedUnits,
  type KeySchema,
  partition,
  SINGLE_ITEM,
  type Touch,
  touchesOf,
  unprocessedOf,
} from './dynamo-requests.ts';
import { type PartitionThroughput, readUnits } from './partition-throughput.ts';

type Wire = Record<string, unknown>;
export type DynamoCall = (operation: string, data: Wire) => Promise<CallAnswer>;

export interface PartitionQuotaOptions {
  readonly throughput: PartitionThroughput;
  readonly schema: KeySchema;
  /** The ARN of a table or index resource (`table`, `table/index/name`), as the throttling reason names it. */
  readonly arnOf: (resource: string) => string;
  /** Told of every request refused (a batch partly refused counts once per refused item). */
  readonly onThrottle: (kind: 'read' | 'write') => void;
}

/** The message an on-demand table throttles a hot key with. */
export const HOT_KEY_MESSAGE =
  'Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or ' +
  'index so please try again shortly. If exceptions persist, check if you have a hot key: ' +
  'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html';

const THROTTLING_TYPE = 'com.amazonaws.dynamodb.v20120810#ThrottlingException';

/** The wire answer of a throttled request (what DynamoDB sends, and the SDK turns into a ThrottlingException). */
export function throttledAnswer(touch: Touch, arnOf: (resource: string) => string, requestId: string): CallAnswer {
  const resourceType = touch.resource.includes('/index/') ? 'Index' : 'Table';
  const operation = touch.kind === 'read' ? 'Read' : 'Write';
  return {
    statusCode: 400,
    requestId,
    data: {
      __type: THROTTLING_TYPE,
      message: HOT_KEY_MESSAGE,
      throttlingReasons: [
        { reason: `${resourceType}${operation}KeyRangeThroughputExceeded`, resource: arnOf(touch.resource) },
      ],
    },
  };
}

let throttled = 0;
const requestIdOf = (): string => `THROTTLED${(throttled++).toString(36).toUpperCase().padStart(43, '0')}`;

/** Adds what a partly processed batch left to what DynamoDB itself left unprocessed. */
function mergeUnprocessed(operation: string, answer: Wire, left: Wire): Wire {
  const field = operation === 'BatchGetItem' ? 'UnprocessedKeys' : 'UnprocessedItems';
  const merged: Record<string, unknown> = { ...((answer[field] ?? {}) as Wire) };
  for (const [table, rest] of Object.entries(left)) {
    const before = merged[table];
    if (operation === 'BatchGetItem') {
      const keys = [
        ...((before as { Keys?: unknown[] } | undefined)?.Keys ?? []),
        ...(rest as { Keys: unknown[] }).Keys,
      ];
      merged[table] = { ...(rest as Wire), Keys: keys };
    } else merged[table] = [...((before as unknown[] | undefined) ?? []), ...(rest as unknown[])];
  }
  return { ...answer, [field]: merged };
}

export function withPartitionQuotas(call: DynamoCall, options: PartitionQuotaOptions): DynamoCall {
  const { throughput, schema } = options;
  const blocked = (touches: readonly Touch[]): Touch | undefined =>
    touches.find((touch) => !throughput.admits(touch.kind, touch.key));

  const single = async (operation: string, data: Wire): Promise<CallAnswer> => {
    const touches = touchesOf(operation, data, schema);
    const refused = blocked(touches);
    if (refused !== undefined) {
      options.onThrottle(refused.kind);
      return throttledAnswer(refused, options.arnOf, requestIdOf());
    }
    const asked = data.ReturnConsumedCapacity !== undefined && data.ReturnConsumedCapacity !== 'NONE';
    const answer = await call(operation, asked ? data : { ...data, ReturnConsumedCapacity: 'TOTAL' });
    const units = consumedUnits(operation, data, answer.statusCode === 200 ? answer.data : undefined);
    for (const touch of touches) throughput.charge(touch.kind, touch.key, units);
    if (asked || answer.statusCode !== 200) return answer;
    const { ConsumedCapacity: _consumed, ...rest } = answer.data;
    return { ...answer, data: rest };
  };

  const batch = async (operation: string, data: Wire): Promise<CallAnswer> => {
    const entries = batchEntries(operation, data, schema);
    const kept: BatchEntry[] = [];
    const left: BatchEntry[] = [];
    let refused: Touch | undefined;
    for (const entry of entries) {
      const touch = blocked(entry.touches);
      if (touch === undefined) kept.push(entry);
      else {
        refused ??= touch;
        left.push(entry);
        options.onThrottle(touch.kind);
      }
    }
    if (refused !== undefined && kept.length === 0) return throttledAnswer(refused, options.arnOf, requestIdOf());
    const answer = await call(operation, left.length === 0 ? data : batchWith(operation, data, kept));
    for (const entry of kept) for (const touch of entry.touches) throughput.charge(touch.kind, touch.key, entry.units);
    if (answer.statusCode !== 200) return answer;
    if (operation === 'BatchGetItem') chargeItemsRead(answer.data, data, options);
    return left.length === 0
      ? answer
      : { ...answer, data: mergeUnprocessed(operation, answer.data, unprocessedOf(operation, data, left)) };
  };

  return (operation, data) => {
    if (SINGLE_ITEM.has(operation)) return single(operation, data);
    if (BATCHES.has(operation)) return batch(operation, data);
    return call(operation, data);
  };
}

/** A batch get's items beyond the minimum each key was charged: their size in 4 KB units, item by item. */
function chargeItemsRead(answer: Wire, data: Wire, options: PartitionQuotaOptions): void {
  const responses = (answer.Responses ?? {}) as Record<string, Record<string, AttributeValue>[]>;
  const requests = (data.RequestItems ?? {}) as Record<string, { ConsistentRead?: boolean }>;
  for (const [table, items] of Object.entries(responses)) {
    const consistent = requests[table]?.ConsistentRead === true;
    for (const item of items) {
      const extra = readUnits(dynamoItemSize(item), consistent) - readUnits(0, consistent);
      const key = partition(table, item[options.schema.hashKey]);
      if (extra > 0 && key !== undefined) options.throughput.charge('read', key, extra);
    }
  }
}
