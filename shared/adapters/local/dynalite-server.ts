/**
 * dynalite in-process: the embedded stack's DynamoDB. It speaks the DynamoDB wire protocol, so the store adapter
 * talks to it through the real @aws-sdk/client-dynamodb client exactly as it talks to AWS.
 */
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient } from '../aws/clients.ts';
import { tableDefinition } from '../aws/table-layout.ts';
import { cacheDynaliteExpressions } from './dynalite-expression-cache.ts';
import { sizeDynaliteItemsAsDynamoDb } from './dynalite-item-size.ts';
import { storeDynaliteTablesAsText } from './dynalite-text-storage.ts';
import { upgradeLocalTable } from './table-upgrade.ts';

interface DynaliteOptions {
  readonly createTableMs?: number;
  readonly deleteTableMs?: number;
  readonly updateTableMs?: number;
  /** LevelDB directory; in memory when absent. */
  readonly path?: string;
}

type DynaliteFactory = (options: DynaliteOptions) => Server;

storeDynaliteTablesAsText();
// dynalite is CommonJS and ships no types: load it with require and type the one function cairn uses.
const dynalite = createRequire(import.meta.url)('dynalite') as DynaliteFactory;
cacheDynaliteExpressions();

export interface LocalDynamo {
  readonly client: DynamoDBClient;
  readonly endpoint: string;
  stop(): Promise<void>;
}

export interface LocalDynamoOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Persist to this directory instead of memory. */
  readonly path?: string;
  /** Create cairn's table with this name (tableDefinition) before returning. */
  readonly tableName?: string;
}

/** Credentials dynalite accepts (it checks only that a signature is present). */
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

export function localDynamoClient(endpoint: string): DynamoDBClient {
  return dynamoDbClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 3 });
}

export async function startLocalDynamo(options: LocalDynamoOptions = {}): Promise<LocalDynamo> {
  sizeDynaliteItemsAsDynamoDb();
  const server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(options.path === undefined ? {} : { path: options.path }),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localDynamoClient(endpoint);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= new Promise<void>((resolve, reject) => {
      client.destroy();
      // Keep-alive sockets would hold server.close() open until they time out.
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    });
    return stopped;
  };
  if (options.tableName !== undefined) {
    try {
      await createLocalTable(client, options.tableName);
    } catch (error) {
      await stop();
      throw error;
    }
  }
  return { client, endpoint, stop };
}

/**
 * Creates cairn's table (see table-layout.ts) in a local DynamoDB and waits until it is ACTIVE (dynalite flips the
 * status on a timer even with createTableMs 0, and refuses item writes until then); an existing table is kept, and
 * brought to today's definition with its items if an older cairn made it (table-upgrade.ts).
 */
export async function createLocalTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new CreateTableCommand(tableDefinition(tableName)));
  } catch (error) {
    if ((error as { name?: unknown }).name !== 'ResourceInUseException') throw error;
  }
  for (let waited = 0; waited < 5000; waited += 5) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexesActive = (Table?.GlobalSecondaryIndexes ?? []).every((index) => index.IndexStatus === 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexesActive) {
      // A table kept from an older cairn may lack an index added since (dynalite cannot add one): rebuilt, items kept.
      await upgradeLocalTable(client, tableName, (message) => console.error(`cairn: ${message}`));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
