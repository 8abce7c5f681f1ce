import { describe, expect, it } from 'vitest';
import type { CallAnswer } from '../../../../infra/local/dynamo-fast-path.ts';
import { HOT_KEY_MESSAGE, withPartitionQuotas } from '../../../../infra/local/quotas/dynamo-partitions.ts';
import { batchEntries, touchesOf } from '../../../../infra/local/quotas/dynamo-requests.ts';
import { createPartitionThroughput } from '../../../../infra/local/quotas/partition-throughput.ts';

const SCHEMA = { hashKey: 'PK', indexHashKeys: { GSI1: 'GSI1PK' } };
const TABLE = 'cairn-local';
const S = (value: string) => ({ S: value });

/** A table that answers every call, reporting `units` consumed when asked (as dynalite does). */
function table(units = 1) {
  const calls: { operation: string; data: Record<string, unknown> }[] = [];
  const call = async (operation: string, data: Record<string, unknown>): Promise<CallAnswer> => {
    calls.push({ operation, data });
    const consumed =
      data.ReturnConsumedCapacity === 'TOTAL' ? { ConsumedCapacity: { CapacityUnits: units, TableName: TABLE } } : {};
    return { statusCode: 200, requestId: 'r', data: { ...consumed } };
  };
  return { call, calls };
}

function quotas(writeUnitsPerSecond: number, readUnitsPerSecond = 3000) {
  let time = 0;
  const throttles: string[] = [];
  const throughput = createPartitionThroughput({ readUnitsPerSecond, writeUnitsPerSecond, now: () => time });
  const options = {
    throughput,
    schema: SCHEMA,
    arnOf: (resource: string) => `arn:aws:dynamodb:us-east-1:123456789012:table/${resource}`,
    onThrottle: (kind: 'read' | 'write') => throttles.push(kind),
  };
  return { options, throttles, advance: (ms: number) => (time += ms) };
}

const put = (pk: string, extra: Record<string, unknown> = {}) => ({
  TableName: TABLE,
  Item: { PK: S(pk), SK: S('X'), ...extra },
});

describe('touchesOf', () => {
  it('charges a put to its partition and to the index partition its item is listed under', () => {
    const touches = touchesOf('PutItem', put('RUN#a', { GSI1PK: S('RUNS#3') }), SCHEMA);
    expect(touches.map((t) => [t.kind, t.resource])).toEqual([
      ['write', TABLE],
      ['write', `${TABLE}/index/GSI1`],
    ]);
  });

  it("reads a query's partition off its key condition, through the attribute names", () => {
    const data = {
      TableName: TABLE,
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': 'PK', '#sk': 'SK' },
      ExpressionAttributeValues: { ':pk': S('RUN#a'), ':prefix': S('STEP#') },
    };
    const [touch] = touchesOf('Query', data, SCHEMA);
    expect(touch).toMatchObject({ kind: 'read', resource: TABLE });
    expect(touch?.key).toBe(touchesOf('GetItem', { TableName: TABLE, Key: { PK: S('RUN#a') } }, SCHEMA)[0]?.key);
  });

  it('charges nothing to a scan', () => {
    expect(touchesOf('Scan', { TableName: TABLE }, SCHEMA)).toEqual([]);
  });
});

describe('batchEntries', () => {
  it('gives each put of a batch write its units by its size in 1 KB units', () => {
    const entries = batchEntries(
      'BatchWriteItem',
      {
        RequestItems: {
          [TABLE]: [
            { PutRequest: { Item: { PK: S('a'), big: S('x'.repeat(3000)) } } },
            { DeleteRequest: { Key: { PK: S('b') } } },
          ],
        },
      },
      SCHEMA,
    );
    expect(entries.map((e) => e.units)).toEqual([3, 1]);
  });
});

describe('withPartitionQuotas', () => {
  it("answers a hot key's write with DynamoDB's ThrottlingException and its reason, and writes nothing", async () => {
    const { options, throttles } = quotas(1);
    const { call, calls } = table(1);
    const limited = withPartitionQuotas(call, options);
    expect((await limited('PutItem', put('RUN#a'))).statusCode).toBe(200);
    const refused = await limited('PutItem', put('RUN#a'));
    expect(refused.statusCode).toBe(400);
    expect(refused.data).toEqual({
      __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
      message: HOT_KEY_MESSAGE,
      throttlingReasons: [
        {
          reason: 'TableWriteKeyRangeThroughputExceeded',
          resource: `arn:aws:dynamodb:us-east-1:123456789012:table/${TABLE}`,
        },
      ],
    });
    expect(calls).toHaveLength(1);
    expect(throttles).toEqual(['write']);
  });

  it('lets another key through while one is hot', async () => {
    const { options } = quotas(1);
    const limited = withPartitionQuotas(table(1).call, options);
    await limited('PutItem', put('RUN#a'));
    expect((await limited('PutItem', put('RUN#b'))).statusCode).toBe(200);
  });

  it('charges what the table reports consumed, and hides the report from a caller that did not ask for it', async () => {
    const { options, advance } = quotas(10);
    const { call, calls } = table(25);
    const limited = withPartitionQuotas(call, options);
    const answer = await limited('UpdateItem', { TableName: TABLE, Key: { PK: S('k'), SK: S('s') } });
    expect(calls[0]?.data.ReturnConsumedCapacity).toBe('TOTAL');
    expect(answer.data.ConsumedCapacity).toBeUndefined();
    advance(1000);
    expect((await limited('UpdateItem', { TableName: TABLE, Key: { PK: S('k') } })).statusCode).toBe(400);
    advance(600);
    expect((await limited('UpdateItem', { TableName: TABLE, Key: { PK: S('k') } })).statusCode).toBe(200);
  });

  it('names an index partition in the reason when the index entry is what is hot', async () => {
    const { options } = quotas(1);
    const limited = withPartitionQuotas(table(1).call, options);
    await limited('PutItem', put('RUN#a', { GSI1PK: S('RUNS#0') }));
    const refused = await limited('PutItem', put('RUN#b', { GSI1PK: S('RUNS#0') }));
    expect(refused.data.throttlingReasons).toEqual([
      expect.objectContaining({ reason: 'IndexWriteKeyRangeThroughputExceeded' }),
    ]);
  });

  it("processes a batch's items on cold keys and answers those on a hot key as unprocessed", async () => {
    const { options, throttles } = quotas(1);
    const { call, calls } = table(1);
    const limited = withPartitionQuotas(call, options);
    await limited('PutItem', put('hot'));
    const batch = {
      RequestItems: {
        [TABLE]: [{ PutRequest: { Item: { PK: S('hot') } } }, { PutRequest: { Item: { PK: S('cold') } } }],
      },
    };
    const answer = await limited('BatchWriteItem', batch);
    expect(answer.statusCode).toBe(200);
    expect(calls.at(-1)?.data.RequestItems).toEqual({ [TABLE]: [{ PutRequest: { Item: { PK: S('cold') } } }] });
    expect(answer.data.UnprocessedItems).toEqual({ [TABLE]: [{ PutRequest: { Item: { PK: S('hot') } } }] });
    expect(throttles).toEqual(['write']);
  });

  it('refuses a batch outright when none of its items can be processed', async () => {
    const { options } = quotas(1);
    const limited = withPartitionQuotas(table(1).call, options);
    await limited('PutItem', put('hot'));
    const answer = await limited('BatchWriteItem', {
      RequestItems: { [TABLE]: [{ PutRequest: { Item: { PK: S('hot') } } }] },
    });
    expect(answer.statusCode).toBe(400);
  });

  it('passes what it does not charge (a scan, a table operation) straight through', async () => {
    const { options } = quotas(1);
    const { call, calls } = table(1);
    const limited = withPartitionQuotas(call, options);
    await limited('Scan', { TableName: TABLE });
    expect(calls[0]?.data).toEqual({ TableName: TABLE });
  });
});
