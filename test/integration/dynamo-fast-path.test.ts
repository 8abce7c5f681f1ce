/**
 * The embedded DynamoDB client's fast path (infra/local/dynamo-fast-path.ts): the store's item commands answered
 * without the SDK's pipeline give what the SDK gives, errors are the SDK's own exceptions (read from the one response
 * dynalite gave), binary values and clients with added middleware go through the SDK, and the command observer sees
 * every command either way.
 */
import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessDynamo } from '../../infra/local/dynalite-in-process.ts';
import { PARTITION_KEY, SORT_KEY } from '../../shared/adapters/aws/table-layout.ts';
import { storeDynaliteTablesAsText } from '../../shared/adapters/local/dynalite-text-storage.ts';

const TABLE = 'fast-path';
const seen: { name: string; output: unknown }[] = [];
let fast: { client: DynamoDBClient; stop(): Promise<void> };
let sdk: { client: DynamoDBClient; stop(): Promise<void> };
const sdkCommands: string[] = [];

beforeAll(async () => {
  fast = await startInProcessDynamo({
    tableName: TABLE,
    onCommand: (name, _input, output) => seen.push({ name, output }),
  });
  sdk = await startInProcessDynamo({ tableName: TABLE });
  // Middleware added after boot (as fault injection adds it): the client is then served by the SDK alone.
  sdk.client.middlewareStack.add(
    (next, context) => async (args) => {
      sdkCommands.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize', name: 'testSeesEveryCommand' },
  );
}, 60_000);
afterAll(async () => {
  await fast?.stop();
  await sdk?.stop();
});

const key = (pk: string, sk = 'x') => ({ [PARTITION_KEY]: { S: pk }, [SORT_KEY]: { S: sk } });
const item = (pk: string, sk = 'x') => ({
  ...key(pk, sk),
  status: { S: 'pending' },
  n: { N: '1' },
  nested: { M: { list: { L: [{ S: 'a' }, { N: '2.5' }, { NULL: true }, { BOOL: false }] }, set: { SS: ['p', 'q'] } } },
});
const withoutMetadata = (output: object) => {
  const { $metadata, ...rest } = output as { $metadata?: unknown };
  return rest;
};
/** The same commands on both clients: what the store reads back must not depend on the path. */
async function onBoth<T extends object>(run: (client: DynamoDBClient) => Promise<T>): Promise<[T, T]> {
  return [await run(fast.client), await run(sdk.client)];
}

describe('the in-process DynamoDB fast path', () => {
  it('answers item commands with what the SDK answers', async () => {
    const [putFast, putSdk] = await onBoth((c) => c.send(new PutItemCommand({ TableName: TABLE, Item: item('a') })));
    expect(withoutMetadata(putFast)).toEqual(withoutMetadata(putSdk));
    const [getFast, getSdk] = await onBoth((c) =>
      c.send(new GetItemCommand({ TableName: TABLE, Key: key('a'), ConsistentRead: true })),
    );
    expect(getFast.Item).toEqual(item('a'));
    expect(withoutMetadata(getFast)).toEqual(withoutMetadata(getSdk));
    expect(getFast.$metadata.httpStatusCode).toBe(200);
    const update = (c: DynamoDBClient) =>
      c.send(
        new UpdateItemCommand({
          TableName: TABLE,
          Key: key('a'),
          UpdateExpression: 'SET #s = :s, n = n + :one',
          ConditionExpression: '#s = :p',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':s': { S: 'running' }, ':p': { S: 'pending' }, ':one': { N: '1' } },
          ReturnValues: 'ALL_NEW',
        }),
      );
    const [updateFast, updateSdk] = await onBoth(update);
    expect(updateFast.Attributes?.n).toEqual({ N: '2' });
    expect(withoutMetadata(updateFast)).toEqual(withoutMetadata(updateSdk));
    const [batchFast, batchSdk] = await onBoth((c) =>
      c.send(new BatchGetItemCommand({ RequestItems: { [TABLE]: { Keys: [key('a'), key('missing')] } } })),
    );
    expect(withoutMetadata(batchFast)).toEqual(withoutMetadata(batchSdk));
    const [queryFast, querySdk] = await onBoth((c) =>
      c.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: '#pk = :pk',
          ExpressionAttributeNames: { '#pk': PARTITION_KEY },
          ExpressionAttributeValues: { ':pk': { S: 'a' } },
        }),
      ),
    );
    expect(queryFast.Count).toBe(1);
    expect(withoutMetadata(queryFast)).toEqual(withoutMetadata(querySdk));
  });

  it('leaves the command’s input as it was (dynalite drops the members it does not know from what it is given)', async () => {
    const input = {
      TableName: TABLE,
      Item: item('untouched'),
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
    };
    const before = structuredClone(input);
    await fast.client.send(new PutItemCommand(input));
    expect(input).toEqual(before);
    const read = await fast.client.send(new GetItemCommand({ TableName: TABLE, Key: key('untouched') }));
    expect(read.Item).toEqual(item('untouched'));
  });

  it('keeps the in-memory tables as text (dynalite-text-storage.ts), loaded before dynalite was', () => {
    expect(storeDynaliteTablesAsText()).toBe(true);
  });

  it('throws the SDK’s own exception when a condition fails', async () => {
    const failing = (c: DynamoDBClient) =>
      c
        .send(
          new PutItemCommand({
            TableName: TABLE,
            Item: item('b'),
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': PARTITION_KEY },
          }),
        )
        .then(
          () => undefined,
          (error: unknown) => error as ConditionalCheckFailedException,
        );
    await onBoth((c) => c.send(new PutItemCommand({ TableName: TABLE, Item: item('b') })));
    const [fromFast, fromSdk] = await onBoth(async (c) => ({ error: await failing(c) }));
    expect(fromFast.error).toBeInstanceOf(ConditionalCheckFailedException);
    expect(fromFast.error?.name).toBe('ConditionalCheckFailedException');
    expect(fromFast.error?.message).toBe(fromSdk.error?.message);
    expect(fromFast.error?.$fault).toBe('client');
    expect(fromFast.error?.$metadata.httpStatusCode).toBe(400);
  });

  it('refuses what the SDK refuses with the same error', async () => {
    const invalid = (c: DynamoDBClient) =>
      c.send(new GetItemCommand({ TableName: TABLE, Key: { [PARTITION_KEY]: { S: 'a' } } })).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    const [fromFast, fromSdk] = await onBoth(async (c) => ({ error: await invalid(c) }));
    expect(fromFast.error?.name).toBe('ValidationException');
    expect(fromFast.error?.name).toBe(fromSdk.error?.name);
    expect(fromFast.error?.message).toBe(fromSdk.error?.message);
  });

  it('hands binary values to the SDK, which turns them into bytes', async () => {
    const bytes = new Uint8Array([0, 1, 2, 250]);
    await fast.client.send(new PutItemCommand({ TableName: TABLE, Item: { ...key('bin'), data: { B: bytes } } }));
    const read = await fast.client.send(new GetItemCommand({ TableName: TABLE, Key: key('bin') }));
    expect(read.Item?.data?.B).toBeInstanceOf(Uint8Array);
    expect([...(read.Item?.data?.B ?? [])]).toEqual([...bytes]);
  });

  it('shows every command to the observer, answered fast or by the SDK, and serves a client with added middleware through the SDK', async () => {
    seen.length = 0;
    sdkCommands.length = 0;
    await onBoth((c) => c.send(new GetItemCommand({ TableName: TABLE, Key: key('b') })));
    await onBoth((c) =>
      c
        .send(
          new PutItemCommand({ TableName: TABLE, Item: item('a'), ConditionExpression: 'attribute_not_exists(PK)' }),
        )
        .catch(() => ({})),
    );
    expect(seen.map((s) => s.name)).toEqual(['GetItemCommand', 'PutItemCommand']);
    expect(seen[0]?.output).toMatchObject({ Item: item('b') });
    expect(seen[1]?.output).toBeUndefined();
    expect(sdkCommands).toEqual(['GetItemCommand', 'PutItemCommand']);
  });
});
