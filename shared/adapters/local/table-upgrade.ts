/**
 * Upgrading a local table made by an older cairn: dynalite cannot add an index to a table, so a table that lacks one
 * of today's indexes (table-layout.ts) is rebuilt. Its items are copied to a side table made with today's definition
 * (a run's item gets the index keys today's cairn writes with it, encodeRun), the old table is dropped and made
 * again, and the items are copied back. Nothing is lost to a crash at any point: until the old table is dropped the
 * side table is only a copy (a boot that finds the old table still short of an index starts over); once it is
 * dropped, a boot that finds the side table copies it back before anything else reads the table.
 *
 * A run's expiry is not stamped by the upgrade (its next projection does): an old run that ended long ago is not
 * deleted by the first sweep after an upgrade.
 */
import {
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { tenantOf } from '../../config/defaults.ts';
import type { Item } from '../aws/dynamo-attributes.ts';
import { decodeRun, ENTITY_ATTRIBUTE, stringItem } from '../aws/dynamo-codec.ts';
import { indexKeys, tableDefinition } from '../aws/table-layout.ts';

const WRITE_BATCH = 25;
const WAIT_MS = 5_000;

const sideTableOf = (tableName: string): string => `${tableName}-upgrade`;

async function describe(client: DynamoDBClient, tableName: string) {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
  } catch (error) {
    if ((error as { name?: unknown }).name === 'ResourceNotFoundException') return undefined;
    throw error;
  }
}

/** The indexes of today's definition the table lacks (none: it is today's). */
export function missingIndexes(
  table: { readonly GlobalSecondaryIndexes?: readonly { readonly IndexName?: string }[] },
  tableName: string,
): string[] {
  const have = new Set((table.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  return (tableDefinition(tableName).GlobalSecondaryIndexes ?? [])
    .map((index) => index.IndexName ?? '')
    .filter((name) => !have.has(name));
}

/** Waits until `tableName` is ACTIVE with its indexes (`gone`: until it no longer exists). */
async function settle(client: DynamoDBClient, tableName: string, gone = false): Promise<void> {
  for (let waited = 0; waited < WAIT_MS; waited += 5) {
    const table = await describe(client, tableName);
    if (gone ? table === undefined : table?.TableStatus === 'ACTIVE') {
      if (gone || (table?.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE')) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`table ${tableName} did not ${gone ? 'go' : 'become ACTIVE'}`);
}

async function create(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(new CreateTableCommand(tableDefinition(tableName)));
  await settle(client, tableName);
}

async function drop(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(new DeleteTableCommand({ TableName: tableName }));
  await settle(client, tableName, true);
}

/** A run's item with the index keys today's cairn writes with it; any other item as it is. */
function refreshed(item: Item): Item {
  if (item[ENTITY_ATTRIBUTE]?.S !== 'run') return item;
  const run = decodeRun(item);
  return { ...item, ...stringItem({ ...indexKeys.runByStatus(tenantOf(run), run.status, run.createdAt, run.runId) }) };
}

/** Copies every item of `from` into `to` (puts: a repeat after a crash writes the same items again). */
async function copy(client: DynamoDBClient, from: string, to: string, change: (item: Item) => Item): Promise<number> {
  let copied = 0;
  let start: Record<string, Item[string]> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({ TableName: from, ExclusiveStartKey: start, ConsistentRead: true }),
    );
    const items = (page.Items ?? []) as Item[];
    for (let i = 0; i < items.length; i += WRITE_BATCH) {
      let pending = items.slice(i, i + WRITE_BATCH).map((item) => ({ PutRequest: { Item: change(item) } }));
      while (pending.length > 0) {
        const answer = await client.send(new BatchWriteItemCommand({ RequestItems: { [to]: pending } }));
        pending = (answer.UnprocessedItems?.[to] ?? []) as typeof pending;
      }
    }
    copied += items.length;
    start = page.LastEvaluatedKey as typeof start;
  } while (start !== undefined);
  return copied;
}

/**
 * Brings `tableName` to today's definition, keeping its items; `report` hears what was done. A table that is
 * today's, with no upgrade left half done, is left alone.
 */
export async function upgradeLocalTable(
  client: DynamoDBClient,
  tableName: string,
  report: (message: string) => void = () => {},
): Promise<void> {
  const side = sideTableOf(tableName);
  let table = await describe(client, tableName);
  const sideTable = await describe(client, side);
  if (table !== undefined && missingIndexes(table, tableName).length > 0) {
    // The old table is whole: (again) copy it aside, then drop it.
    if (sideTable !== undefined) await drop(client, side);
    await create(client, side);
    const copied = await copy(client, tableName, side, refreshed);
    report(`upgrading table ${tableName}: ${copied} items copied aside, to gain ${missingIndexes(table, tableName)}`);
    await drop(client, tableName);
    table = undefined;
  } else if (sideTable === undefined) {
    return;
  }
  if (table === undefined) await create(client, tableName);
  const back = await copy(client, side, tableName, (item) => item);
  await drop(client, side);
  report(`upgraded table ${tableName}: ${back} items`);
}
