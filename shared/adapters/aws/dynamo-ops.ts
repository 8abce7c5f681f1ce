/**
 * The few DynamoDB calls the store makes, each with the conventions applied once: ConsistentRead on reads that
 * gate a decision, a lost condition reported as `false` / `undefined` (never thrown as an SDK error), an oversized
 * item turned into PayloadTooLargeError before (or, if the estimate was short, after) DynamoDB refuses it.
 */
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  type QueryCommandInput,
  UpdateItemCommand,
  type WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { ConflictError, PayloadTooLargeError } from '../../errors.ts';
import { encodeOutbox, OUTBOX_ATTRIBUTE, type OutboxEntry, type StreamRecord } from '../../events/outbox.ts';
import { guardSize, type Item } from './dynamo-attributes.ts';
import { blobOwner, offload, outboxValue, referencedParts, restore } from './dynamo-blobs.ts';
import { type Condition, ExpressionScope, type UpdateBuilder } from './dynamo-expressions.ts';
import type { RunLayouts } from './dynamo-layouts.ts';
import { type ItemKey, itemKeys, PARTITION_KEY, SORT_KEY } from './table-layout.ts';

export interface DynamoContext {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Timestamps the store writes itself (`updatedAt`). */
  readonly now: () => Date;
  /**
   * The embedded stack's change stream: each write that announced something, in the shape DynamoDB Streams deliver
   * it, handed over as soon as the write has landed. Absent when deployed (the table's own stream does this).
   */
  readonly stream?: ((record: StreamRecord) => void) | undefined;
  /** How long an ended run's records are kept, in seconds (its run item's `expiresAt`: dynamo-retention.ts). */
  readonly retentionSeconds?: number;
  /** The runs' step partitions this process knows (dynamo-layouts.ts). */
  readonly layouts: RunLayouts;
}

/**
 * How a write treats the item's outbox: an entry announces it (the events land with the write), `null` clears
 * what an earlier write announced, undefined leaves the attribute alone (items that never announce).
 */
export type OutboxWrite = OutboxEntry | null | undefined;

export const isConditionFailure = (error: unknown): boolean =>
  typeof error === 'object' &&
  error !== null &&
  (error as { name?: unknown }).name === 'ConditionalCheckFailedException';

const isItemTooLarge = (error: unknown): boolean =>
  typeof error === 'object' &&
  error !== null &&
  (error as { name?: unknown }).name === 'ValidationException' &&
  /item size/i.test(String((error as { message?: unknown }).message));

async function guarded<T>(context: Readonly<Record<string, unknown>>, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isItemTooLarge(error)) {
      throw new PayloadTooLargeError('DynamoDB refused an item over its size limit', { cause: error, context });
    }
    throw error;
  }
}

const keyContext = (key: ItemKey): Record<string, string> => ({ pk: key.PK, sk: key.SK });

/** PutItem under `condition` (none: unconditional); false when the condition failed. */
export async function conditionalPut(
  ctx: DynamoContext,
  item: Item,
  scope: ExpressionScope,
  condition: Condition | undefined,
): Promise<boolean> {
  const context = { pk: item.PK?.S, sk: item.SK?.S };
  const { value: stored, parts } = offload(item, blobOwner(item[PARTITION_KEY]?.S, item));
  guardSize(stored, context);
  await writeParts(ctx, parts);
  try {
    await guarded(context, () =>
      ctx.client.send(
        new PutItemCommand({
          TableName: ctx.tableName,
          Item: stored,
          ...(condition === undefined ? {} : { ConditionExpression: condition, ...scope.parts() }),
        }),
      ),
    );
    // The image as stored, as the table's stream carries it: a large outbox's events are out of line there.
    if (stored[OUTBOX_ATTRIBUTE] !== undefined) ctx.stream?.({ eventName: 'INSERT', dynamodb: { NewImage: stored } });
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** UpdateItem under `condition` (none: unconditional) returning ALL_NEW; undefined when the condition failed. */
export async function conditionalUpdate(
  ctx: DynamoContext,
  key: ItemKey,
  scope: ExpressionScope,
  update: UpdateBuilder,
  condition: Condition | undefined,
  outbox?: OutboxWrite,
): Promise<Item | undefined> {
  const announced = outbox ? outboxValue(outbox) : undefined;
  if (announced) update.set(OUTBOX_ATTRIBUTE, announced.value, 'outbox');
  else if (outbox === null) update.remove(OUTBOX_ATTRIBUTE);
  const expression = scope.parts();
  const { value: values, parts } = offload(expression.ExpressionAttributeValues ?? {}, blobOwner(key.PK));
  guardSize(values, keyContext(key));
  await writeParts(ctx, [...(announced?.parts ?? []), ...parts]);
  try {
    const result = await guarded(keyContext(key), () =>
      ctx.client.send(
        new UpdateItemCommand({
          TableName: ctx.tableName,
          Key: { PK: { S: key.PK }, SK: { S: key.SK } },
          UpdateExpression: update.expression(),
          ...(condition === undefined ? {} : { ConditionExpression: condition }),
          ...expression,
          ...(expression.ExpressionAttributeValues === undefined ? {} : { ExpressionAttributeValues: values }),
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    if (outbox && result.Attributes) ctx.stream?.({ eventName: 'MODIFY', dynamodb: { NewImage: result.Attributes } });
    return result.Attributes === undefined ? undefined : (await restored(ctx, [result.Attributes]))[0];
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** An item's outbox attribute, for a put that announces (spread into the item). */
export const outboxAttribute = (entry: OutboxEntry | undefined): Item =>
  entry === undefined ? {} : { [OUTBOX_ATTRIBUTE]: { S: encodeOutbox(entry) } };

/** DeleteItem under `condition`; false when the condition failed. */
export async function conditionalDelete(
  ctx: DynamoContext,
  key: ItemKey,
  scope: ExpressionScope,
  condition: Condition,
): Promise<boolean> {
  try {
    await ctx.client.send(
      new DeleteItemCommand({
        TableName: ctx.tableName,
        Key: { PK: { S: key.PK }, SK: { S: key.SK } },
        ConditionExpression: condition,
        ...scope.parts(),
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** A strongly consistent GetItem: every read the store offers may gate a decision. */
export async function getItem(ctx: DynamoContext, key: ItemKey): Promise<Item | undefined> {
  const result = await ctx.client.send(
    new GetItemCommand({
      TableName: ctx.tableName,
      Key: { PK: { S: key.PK }, SK: { S: key.SK } },
      ConsistentRead: true,
    }),
  );
  return result.Item === undefined ? undefined : (await restored(ctx, [result.Item]))[0];
}

/** Some attributes of an item (`projection`, named in `scope`), read consistently; no value kept out of line is asked. */
export async function getItemProjected(
  ctx: DynamoContext,
  key: ItemKey,
  projection: string,
  scope: ExpressionScope,
): Promise<Item | undefined> {
  const { ExpressionAttributeNames } = scope.parts();
  const result = await ctx.client.send(
    new GetItemCommand({
      TableName: ctx.tableName,
      Key: { PK: { S: key.PK }, SK: { S: key.SK } },
      ConsistentRead: true,
      ProjectionExpression: projection,
      ExpressionAttributeNames,
    }),
  );
  return result.Item;
}

/** Writes the parts of values moved out of line, before the item that refers to them. */
async function writeParts(ctx: DynamoContext, parts: readonly Item[]): Promise<void> {
  if (parts.length > 0) await batchPutItems(ctx, parts);
}

/** Puts back the values that the items keep out of line (one batch read for all of them; none when none do). */
async function restored(ctx: DynamoContext, items: Item[]): Promise<Item[]> {
  const keys = referencedParts(items);
  if (keys.length === 0) return items;
  return restore(items, await batchGetItems(ctx, keys));
}

/** BatchGetItem takes at most this many keys per request. */
const BATCH_GET_LIMIT = 100;
const UNPROCESSED_RETRIES = 8;

/**
 * Strongly consistent reads of several items in as few round trips as BatchGetItem allows (100 keys a request),
 * re-asking for whatever DynamoDB leaves unprocessed. Items come back in no particular order; missing ones are absent.
 */
export async function batchGetItems(
  ctx: DynamoContext,
  keys: readonly ItemKey[],
  /** Only these attributes (and the keys), for a read that needs a small part of large items. */
  attributes?: readonly string[],
): Promise<Item[]> {
  const projection =
    attributes === undefined
      ? {}
      : {
          ProjectionExpression: [PARTITION_KEY, SORT_KEY, ...attributes].map((_, i) => `#p${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(
            [PARTITION_KEY, SORT_KEY, ...attributes].map((name, i) => [`#p${i}`, name]),
          ),
        };
  const unique = [...new Map(keys.map((key) => [`${key.PK}\u0000${key.SK}`, key])).values()];
  const items: Item[] = [];
  for (let i = 0; i < unique.length; i += BATCH_GET_LIMIT) {
    const batch: Item[] = unique
      .slice(i, i + BATCH_GET_LIMIT)
      .map((key) => ({ [PARTITION_KEY]: { S: key.PK }, [SORT_KEY]: { S: key.SK } }));
    await untilProcessed('read', batch, async (pending) => {
      const result = await ctx.client.send(
        new BatchGetItemCommand({
          RequestItems: { [ctx.tableName]: { Keys: pending, ConsistentRead: true, ...projection } },
        }),
      );
      items.push(...(result.Responses?.[ctx.tableName] ?? []));
      return result.UnprocessedKeys?.[ctx.tableName]?.Keys ?? [];
    });
  }
  return restored(ctx, items);
}

/** BatchWriteItem takes at most this many requests. */
const BATCH_WRITE_LIMIT = 25;

/** Unconditional puts in as few round trips as BatchWriteItem allows, re-sending what DynamoDB leaves unprocessed. */
export async function batchPutItems(ctx: DynamoContext, items: readonly Item[]): Promise<void> {
  for (let i = 0; i < items.length; i += BATCH_WRITE_LIMIT) {
    const batch: WriteRequest[] = items.slice(i, i + BATCH_WRITE_LIMIT).map((Item) => ({ PutRequest: { Item } }));
    await untilProcessed('write', batch, async (pending) => {
      const result = await ctx.client.send(new BatchWriteItemCommand({ RequestItems: { [ctx.tableName]: pending } }));
      return result.UnprocessedItems?.[ctx.tableName] ?? [];
    });
  }
}

/** Unconditional deletes in as few round trips as BatchWriteItem allows (deleting what is gone is no error). */
export async function batchDeleteItems(ctx: DynamoContext, keys: readonly ItemKey[]): Promise<void> {
  for (let i = 0; i < keys.length; i += BATCH_WRITE_LIMIT) {
    const batch: WriteRequest[] = keys
      .slice(i, i + BATCH_WRITE_LIMIT)
      .map((key) => ({ DeleteRequest: { Key: { [PARTITION_KEY]: { S: key.PK }, [SORT_KEY]: { S: key.SK } } } }));
    await untilProcessed('write', batch, async (pending) => {
      const result = await ctx.client.send(new BatchWriteItemCommand({ RequestItems: { [ctx.tableName]: pending } }));
      return result.UnprocessedItems?.[ctx.tableName] ?? [];
    });
  }
}

/** Sends a batch, then what DynamoDB left unprocessed again with backoff; a batch that never drains is retryable. */
async function untilProcessed<T>(kind: 'read' | 'write', batch: T[], send: (pending: T[]) => Promise<T[]>) {
  let pending = batch;
  for (let tries = 0; pending.length > 0; tries++) {
    if (tries > UNPROCESSED_RETRIES)
      throw new ConflictError(`DynamoDB kept items of a batch ${kind} unprocessed`, {
        context: { unprocessed: pending.length },
        retryable: true,
      });
    if (tries > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(2 ** tries * 10, 500)));
    pending = await send(pending);
  }
}

/** Finds an item of a batch read by its key. */
export const itemWithKey = (items: readonly Item[], key: ItemKey): Item | undefined =>
  items.find((item) => item[PARTITION_KEY]?.S === key.PK && item[SORT_KEY]?.S === key.SK);

export type QueryInput = Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>;

/** Query every page (or stop once `limit` items were collected). */
export async function queryAll(
  ctx: DynamoContext,
  input: QueryInput,
  limit = Number.POSITIVE_INFINITY,
): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await ctx.client.send(
      new QueryCommand({
        ...input,
        TableName: ctx.tableName,
        ...(start === undefined ? {} : { ExclusiveStartKey: start }),
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined && items.length < limit);
  return restored(ctx, items.length > limit ? items.slice(0, limit) : items);
}

/**
 * The `limit` items with the greatest `sortKey` over several partitions, each queried newest first (a k-way merge):
 * each partition is read a page at a time (about its share of `limit`), and read on only while its next item may
 * still be among the newest. So a page of 100 over 8 partitions reads 160 items or so, not 800.
 */
export async function queryNewestAcross(
  ctx: DynamoContext,
  inputs: readonly QueryInput[],
  sortKey: string,
  limit: number,
): Promise<Item[]> {
  // Half again a partition's even share: hashed ids spread unevenly, and a second round trip costs more than a few items.
  const pageSize = Math.ceil((1.5 * limit) / Math.max(1, inputs.length)) + 1;
  const shards = inputs.map((input) => ({
    input,
    items: [] as Item[],
    start: undefined as Item | undefined,
    done: false,
  }));
  const readOn = async (shard: (typeof shards)[number]): Promise<void> => {
    const page = await ctx.client.send(
      new QueryCommand({
        ...shard.input,
        TableName: ctx.tableName,
        Limit: pageSize,
        ...(shard.start === undefined ? {} : { ExclusiveStartKey: shard.start }),
      }),
    );
    shard.items.push(...(page.Items ?? []));
    shard.start = page.LastEvaluatedKey;
    shard.done = shard.start === undefined;
  };
  const keyOf = (item: Item | undefined): string => item?.[sortKey]?.S ?? '';
  await Promise.all(shards.map(readOn));
  const taken: Item[] = [];
  while (taken.length < limit) {
    // A partition with nothing left in hand but more to read may hold the next newest item: read it first.
    const dry = shards.filter((shard) => shard.items.length === 0 && !shard.done);
    if (dry.length > 0) {
      await Promise.all(dry.map(readOn));
      continue;
    }
    let newest: (typeof shards)[number] | undefined;
    for (const shard of shards)
      if (shard.items.length > 0 && (newest === undefined || keyOf(shard.items[0]) > keyOf(newest.items[0])))
        newest = shard;
    const item = newest?.items.shift();
    if (item === undefined) break;
    taken.push(item);
  }
  return restored(ctx, taken);
}

/** A run's items of one kind (`begins_with(SK, :prefix)`), strongly consistent. */
export function runItemsQuery(runId: string, prefix: string): QueryInput {
  return partitionItemsQuery(itemKeys.runPartition(runId), prefix);
}

/** The items of one partition whose sort key starts with `prefix`, read consistently (only `projection`, if named). */
export function partitionItemsQuery(partition: string, prefix: string, projection?: readonly string[]): QueryInput {
  const scope = new ExpressionScope();
  const pk = scope.equals(PARTITION_KEY, { S: partition }, 'pk');
  const sk = `begins_with(${scope.name(SORT_KEY)}, ${scope.value('prefix', { S: prefix })})`;
  const shown =
    projection === undefined ? {} : { ProjectionExpression: projection.map((n) => scope.name(n)).join(', ') };
  return { KeyConditionExpression: `${pk} AND ${sk}`, ConsistentRead: true, ...shown, ...scope.parts() };
}
