import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynalite, type TestDynamo } from '../../../support/dynalite.ts';

describe('dynalite expression cache', () => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo.stop();
  });

  const key = (id: string) => ({ PK: { S: id }, SK: { S: 'X' } });
  const read = async (id: string) =>
    (await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tableName, Key: key(id), ConsistentRead: true })))
      .Item;
  const update = (id: string, input: Omit<ConstructorParameters<typeof UpdateItemCommand>[0], 'TableName' | 'Key'>) =>
    dynamo.client.send(new UpdateItemCommand({ TableName: dynamo.tableName, Key: key(id), ...input }));

  it('writes each request its own values when the same expression is sent again', async () => {
    for (const value of ['one', 'two', 'three'])
      await update(`values-${value}`, {
        UpdateExpression: 'SET #v = :v, #n = :n',
        ExpressionAttributeNames: { '#v': 'v', '#n': 'n' },
        ExpressionAttributeValues: { ':v': { S: value }, ':n': { N: String(value.length) } },
      });

    expect(await read('values-two')).toMatchObject({ v: { S: 'two' }, n: { N: '3' } });
    expect(await read('values-three')).toMatchObject({ v: { S: 'three' }, n: { N: '5' } });
  });

  it('writes the attribute each request names when the same expression names another one', async () => {
    for (const name of ['first', 'second;#b="x"'])
      await update('names-differ', {
        UpdateExpression: 'SET #a = :v',
        ExpressionAttributeNames: { '#a': name },
        ExpressionAttributeValues: { ':v': { S: name } },
      });

    expect(await read('names-differ')).toMatchObject({
      first: { S: 'first' },
      'second;#b="x"': { S: 'second;#b="x"' },
    });
  });

  it('evaluates a repeated condition against this request values', async () => {
    const setIf = (expected: string) =>
      update('condition', {
        UpdateExpression: 'SET #v = :next',
        ConditionExpression: 'attribute_not_exists(#v) OR #v = :expected',
        ExpressionAttributeNames: { '#v': 'v' },
        ExpressionAttributeValues: { ':next': { S: `after-${expected}` }, ':expected': { S: expected } },
      });
    await setIf('x');
    await setIf('after-x');

    await expect(setIf('after-x')).rejects.toThrow(/conditional request failed/i);
    expect(await read('condition')).toMatchObject({ v: { S: 'after-after-x' } });
  });

  it('still refuses a value of the wrong type for an expression first seen with the right one', async () => {
    const add = (amount: { N: string } | { S: string }) =>
      update('types', {
        UpdateExpression: 'ADD #c :amount',
        ExpressionAttributeNames: { '#c': 'c' },
        ExpressionAttributeValues: { ':amount': amount },
      });
    await add({ N: '1' });

    await expect(add({ S: 'one' })).rejects.toThrow(/Incorrect operand type/);
  });

  it('counts a name as used by a repeated condition whatever the update expression beside it uses', async () => {
    const names = { '#a': 'a', '#b': 'b' };
    const values = { ':v': { S: 'v' } };
    // The first request's update uses #a as well; the second's does not, so only the (repeated) condition uses it.
    await update('names-1', {
      UpdateExpression: 'SET #a = :v, #b = :v',
      ConditionExpression: 'attribute_not_exists(#a)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    });

    await expect(
      update('names-2', {
        UpdateExpression: 'SET #b = :v',
        ConditionExpression: 'attribute_not_exists(#a)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    ).resolves.toBeDefined();
    await expect(
      update('names-3', {
        UpdateExpression: 'SET #b = :v',
        ConditionExpression: 'attribute_not_exists(#b)',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    ).rejects.toThrow(/unused in expressions/);
  });

  it('reads and writes the map member each request names when the same shape names another one', async () => {
    const releaseIf = (member: string, generation: string) =>
      update('members', {
        UpdateExpression: 'SET #m.#k = :g',
        ConditionExpression: 'attribute_not_exists(#m.#k) OR #m.#k < :g',
        ExpressionAttributeNames: { '#m': 'm', '#k': member },
        ExpressionAttributeValues: { ':g': { N: generation } },
      });
    await update('members', {
      UpdateExpression: 'SET #m = :empty',
      ExpressionAttributeNames: { '#m': 'm' },
      ExpressionAttributeValues: { ':empty': { M: {} } },
    });
    await releaseIf('a', '2');
    await releaseIf('b', '1');
    await releaseIf('b', '3');

    await expect(releaseIf('a', '1')).rejects.toThrow(/conditional request failed/i);
    expect(await read('members')).toMatchObject({ m: { M: { a: { N: '2' }, b: { N: '3' } } } });
  });

  it('reads placeholders named differently in a request of the same shape as that request names them', async () => {
    await update('renamed', {
      UpdateExpression: 'SET #first = :one, #second = :two',
      ExpressionAttributeNames: { '#first': 'x', '#second': 'y' },
      ExpressionAttributeValues: { ':one': { S: '1' }, ':two': { S: '2' } },
    });
    await update('renamed', {
      UpdateExpression: 'SET #second = :two, #first = :one',
      ExpressionAttributeNames: { '#first': 'x', '#second': 'y' },
      ExpressionAttributeValues: { ':one': { S: 'one' }, ':two': { S: 'two' } },
    });

    expect(await read('renamed')).toMatchObject({ x: { S: 'one' }, y: { S: 'two' } });
  });

  it('still refuses two placeholders for one attribute in a shape first seen with two attributes', async () => {
    const set = (names: Record<string, string>) =>
      update('overlap', {
        UpdateExpression: 'SET #a = :v, #b = :w',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':v': { S: 'v' }, ':w': { S: 'w' } },
      });
    await set({ '#a': 'x', '#b': 'y' });

    await expect(set({ '#a': 'x', '#b': 'x' })).rejects.toThrow(/overlap/);
  });

  it('still refuses a placeholder naming an attribute the expression also spells out', async () => {
    const set = (name: string) =>
      update('spelled', {
        UpdateExpression: 'SET #a = :v, c = :w',
        ExpressionAttributeNames: { '#a': name },
        ExpressionAttributeValues: { ':v': { S: 'v' }, ':w': { S: 'w' } },
      });
    await set('x');

    await expect(set('c')).rejects.toThrow(/overlap/);
  });
});
