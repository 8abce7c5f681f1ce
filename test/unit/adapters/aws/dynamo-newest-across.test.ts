import type { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { type DynamoContext, queryNewestAcross } from '../../../../shared/adapters/aws/dynamo-ops.ts';

/** Partitions of items sorted newest first, served a page (`Limit`) at a time from `ExclusiveStartKey`. */
function fakeContext(partitions: Record<string, readonly string[]>) {
  const reads: { partition: string; items: number }[] = [];
  const client = {
    send: async (command: QueryCommand) => {
      const input = command.input;
      const partition = String(Object.values(input.ExpressionAttributeValues ?? {})[0]?.S);
      const all = partitions[partition] ?? [];
      const from = input.ExclusiveStartKey === undefined ? 0 : Number(input.ExclusiveStartKey.at?.N);
      const items = all.slice(from, from + (input.Limit ?? all.length)).map((sk) => ({ SK: { S: sk } }));
      reads.push({ partition, items: items.length });
      const next = from + items.length;
      return { Items: items, ...(next < all.length ? { LastEvaluatedKey: { at: { N: String(next) } } } : {}) };
    },
  } as unknown as DynamoDBClient;
  const ctx = { client, tableName: 't', now: () => new Date() } as DynamoContext;
  const inputs = Object.keys(partitions).map((partition) => ({
    KeyConditionExpression: '#k = :v',
    ExpressionAttributeValues: { ':v': { S: partition } },
  }));
  return { ctx, inputs, reads };
}

const newestFirst = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(count - i).padStart(3, '0')}`);

describe('queryNewestAcross', () => {
  it('merges the partitions newest first and reads about the page, not every partition’s page', async () => {
    const partitions = Object.fromEntries(
      Array.from({ length: 8 }, (_, p) => [`P${p}`, newestFirst(`2026-0${p}-`, 50)]),
    );
    const { ctx, inputs, reads } = fakeContext(partitions);
    const got = (await queryNewestAcross(ctx, inputs, 'SK', 20)).map((item) => item.SK?.S);
    const expected = Object.values(partitions).flat().sort().reverse().slice(0, 20);
    expect(got).toEqual(expected);
    expect(reads.reduce((n, r) => n + r.items, 0)).toBeLessThan(20 + 8 * 5 + 1);
  });

  it('reads on in the one partition that holds all the newest items', async () => {
    const { ctx, inputs } = fakeContext({
      hot: newestFirst('9', 40),
      cold1: newestFirst('1', 40),
      cold2: newestFirst('2', 40),
    });
    const got = (await queryNewestAcross(ctx, inputs, 'SK', 30)).map((item) => item.SK?.S);
    expect(got).toEqual(newestFirst('9', 40).slice(0, 30));
  });

  it('answers what there is when the partitions hold fewer than the limit', async () => {
    const { ctx, inputs } = fakeContext({ a: ['b2', 'b1'], b: [], c: ['c1'] });
    expect((await queryNewestAcross(ctx, inputs, 'SK', 10)).map((item) => item.SK?.S)).toEqual(['c1', 'b2', 'b1']);
  });
});
