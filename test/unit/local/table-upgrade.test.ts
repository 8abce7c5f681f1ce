/** Upgrading a local table an older cairn made: rebuilt with today's indexes, every item kept, a crash survived. */
import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { stringItem } from '../../../shared/adapters/aws/dynamo-codec.ts';
import { tableDefinition } from '../../../shared/adapters/aws/table-layout.ts';
import { type LocalDynamo, startLocalDynamo } from '../../../shared/adapters/local/dynalite-server.ts';
import { missingIndexes, upgradeLocalTable } from '../../../shared/adapters/local/table-upgrade.ts';

const opened: LocalDynamo[] = [];
afterAll(async () => {
  await Promise.all(opened.map((dynamo) => dynamo.stop()));
});

/** A table as an older cairn made it: today's definition without its status index. */
async function oldTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const today = tableDefinition(tableName);
  await client.send(
    new CreateTableCommand({
      ...today,
      GlobalSecondaryIndexes: (today.GlobalSecondaryIndexes ?? []).filter((index) => index.IndexName === 'GSI1'),
    }),
  );
  for (let i = 0; i < 200; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const runItem = (runId: string) =>
  stringItem({
    PK: `RUN#${runId}`,
    SK: 'RUN',
    entity: 'run',
    runId,
    status: 'complete',
    objective: 'kept',
    createdAt: '2030-01-01T00:00:00.000Z',
    updatedAt: '2030-01-01T00:00:00.000Z',
  });

async function withItems(tableName: string): Promise<LocalDynamo> {
  const dynamo = await startLocalDynamo();
  opened.push(dynamo);
  await oldTable(dynamo.client, tableName);
  const items = [
    { ...runItem('r1'), revision: { N: '1' }, replans: { N: '0' } },
    stringItem({ PK: 'RUN#r1', SK: 'STEP#a', entity: 'step' }),
  ];
  for (const item of items) await dynamo.client.send(new PutItemCommand({ TableName: tableName, Item: item }));
  return dynamo;
}

describe('upgradeLocalTable', () => {
  it('rebuilds a table that lacks an index, keeping every item and indexing its runs', async () => {
    const dynamo = await withItems('old');
    const said: string[] = [];

    await upgradeLocalTable(dynamo.client, 'old', (message) => said.push(message));

    const { Table } = await dynamo.client.send(new DescribeTableCommand({ TableName: 'old' }));
    expect(Table && missingIndexes(Table, 'old')).toEqual([]);
    const step = await dynamo.client.send(
      new GetItemCommand({ TableName: 'old', Key: { PK: { S: 'RUN#r1' }, SK: { S: 'STEP#a' } } }),
    );
    expect(step.Item?.entity?.S).toBe('step');
    const statusIndex = (tableDefinition('old').GlobalSecondaryIndexes ?? []).find((i) => i.IndexName !== 'GSI1');
    const partition = statusIndex?.KeySchema?.[0]?.AttributeName ?? '';
    const run = await dynamo.client.send(
      new GetItemCommand({ TableName: 'old', Key: { PK: { S: 'RUN#r1' }, SK: { S: 'RUN' } } }),
    );
    const indexed = await dynamo.client.send(
      new QueryCommand({
        TableName: 'old',
        IndexName: statusIndex?.IndexName,
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': partition },
        ExpressionAttributeValues: { ':p': run.Item?.[partition] ?? { S: 'none' } },
      }),
    );
    expect(indexed.Items?.map((item) => item.runId?.S)).toEqual(['r1']);
    expect(said.join(' ')).toContain('2 items');
  });

  it('finishes an upgrade a crash left after the old table was dropped: the side copy goes back', async () => {
    const dynamo = await withItems('crashed');
    // What the first half of an upgrade leaves: the side table whole, the table gone and made again, empty.
    await upgradeLocalTable(dynamo.client, 'crashed');
    await dynamo.client.send(new CreateTableCommand(tableDefinition('crashed-upgrade')));
    for (let i = 0; i < 200; i++) {
      const { Table } = await dynamo.client.send(new DescribeTableCommand({ TableName: 'crashed-upgrade' }));
      if (Table?.TableStatus === 'ACTIVE') break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await dynamo.client.send(new PutItemCommand({ TableName: 'crashed-upgrade', Item: runItem('r2') }));

    await upgradeLocalTable(dynamo.client, 'crashed');

    const copied = await dynamo.client.send(
      new GetItemCommand({ TableName: 'crashed', Key: { PK: { S: 'RUN#r2' }, SK: { S: 'RUN' } } }),
    );
    expect(copied.Item?.runId?.S).toBe('r2');
    await expect(dynamo.client.send(new DescribeTableCommand({ TableName: 'crashed-upgrade' }))).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
  });

  it('leaves a table of today alone', async () => {
    const dynamo = await startLocalDynamo({ tableName: 'today' });
    opened.push(dynamo);
    const said: string[] = [];
    await upgradeLocalTable(dynamo.client, 'today', (message) => said.push(message));
    expect(said).toEqual([]);
  });
});
