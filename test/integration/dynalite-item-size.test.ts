/**
 * DynamoDB's 400 KB item limit in both local DynamoDBs (the tests' dynalite on a socket, the embedded stack's in
 * process): what AWS refuses is refused with AWS's error and message, sizes counted as DynamoDB counts them
 * (attribute names plus values, in UTF-8 bytes).
 */
import {
  BatchWriteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AWS_LIMITS } from '../../infra/local/aws-limits.ts';
import { startInProcessDynamo } from '../../infra/local/dynalite-in-process.ts';
import { PARTITION_KEY, SORT_KEY } from '../../shared/adapters/aws/table-layout.ts';
import { dynamoItemSize } from '../../shared/adapters/local/dynalite-item-size.ts';
import { type LocalDynamo, startLocalDynamo } from '../../shared/adapters/local/dynalite-server.ts';

const TABLE = 'limits';
let socket: LocalDynamo;
let inProcess: { client: DynamoDBClient; stop(): Promise<void> };

beforeAll(async () => {
  socket = await startLocalDynamo({ tableName: TABLE });
  inProcess = await startInProcessDynamo({ tableName: TABLE });
}, 60_000);
afterAll(async () => {
  await socket?.stop();
  await inProcess?.stop();
});

const keys = (id: string) => ({ [PARTITION_KEY]: { S: id }, [SORT_KEY]: { S: 'x' } });
/** An item of exactly `bytes` bytes as DynamoDB counts them, its filler made of `char`. */
function itemOf(id: string, bytes: number, char = 'a') {
  const base = { ...keys(id), data: { S: '' } };
  const room = bytes - dynamoItemSize(base);
  const perChar = Buffer.byteLength(char, 'utf8');
  const item = { ...base, data: { S: char.repeat(Math.floor(room / perChar)) + 'a'.repeat(room % perChar) } };
  expect(dynamoItemSize(item)).toBe(bytes);
  return item;
}
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as Error,
  );

describe('dynamoItemSize', () => {
  it('counts attribute names and values in UTF-8 bytes', () => {
    expect(dynamoItemSize({ ab: { S: 'xyz' } })).toBe(5);
    expect(dynamoItemSize({ é: { S: 'é€' } })).toBe(2 + 5);
    expect(dynamoItemSize({ n: { N: '12345' } })).toBe(1 + 4);
    expect(dynamoItemSize({ f: { BOOL: true }, z: { NULL: true } })).toBe(4);
    expect(dynamoItemSize({ m: { M: { k: { S: 'v' } } } })).toBe(1 + 3 + 1 + 2);
  });
});

describe.each([
  ['dynalite on a socket', () => socket.client],
  ['the embedded stack’s dynalite', () => inProcess.client],
])('the 400 KB item limit in %s', (_name, client) => {
  it('takes an item of exactly 400 KB and refuses one byte more with ValidationException', async () => {
    await client().send(new PutItemCommand({ TableName: TABLE, Item: itemOf('at', AWS_LIMITS.itemBytes) }));
    const error = await refusal(
      client().send(new PutItemCommand({ TableName: TABLE, Item: itemOf('over', AWS_LIMITS.itemBytes + 1) })),
    );
    expect(error).toMatchObject({ name: 'ValidationException' });
    expect(error?.message).toBe('Item size has exceeded the maximum allowed size');
  });

  it('counts non-ASCII text in UTF-8 bytes: 210,000 "é" are 420,000 bytes, over the limit', async () => {
    const item = { ...keys('accents'), data: { S: 'é'.repeat(210_000) } };
    const error = await refusal(client().send(new PutItemCommand({ TableName: TABLE, Item: item })));
    expect(error).toMatchObject({ name: 'ValidationException' });
    const fits = itemOf('accents-fit', AWS_LIMITS.itemBytes, 'é');
    await client().send(new PutItemCommand({ TableName: TABLE, Item: fits }));
  });

  it('refuses an update that grows an item over the limit', async () => {
    await client().send(new PutItemCommand({ TableName: TABLE, Item: itemOf('grow', 300_000) }));
    const error = await refusal(
      client().send(
        new UpdateItemCommand({
          TableName: TABLE,
          Key: keys('grow'),
          UpdateExpression: 'SET more = :more',
          ExpressionAttributeValues: { ':more': { S: '€'.repeat(40_000) } },
        }),
      ),
    );
    expect(error).toMatchObject({ name: 'ValidationException' });
    expect(error?.message).toBe('Item size to update has exceeded the maximum allowed size');
  });

  it('refuses a batch that holds an item over the limit', async () => {
    const error = await refusal(
      client().send(
        new BatchWriteItemCommand({
          RequestItems: { [TABLE]: [{ PutRequest: { Item: itemOf('batch', AWS_LIMITS.itemBytes + 10, '€') } }] },
        }),
      ),
    );
    expect(error).toMatchObject({ name: 'ValidationException' });
  });
});
