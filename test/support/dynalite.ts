/**
 * dynalite for tests: one in-process server per test file (vitest gives every file its own module
 * instance), a fresh table per call so tests never see each other's items.
 */
import { type AttributeValue, DeleteTableCommand, type DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { createLocalTable, type LocalDynamo, startLocalDynamo } from '../../shared/adapters/local/dynalite-server.ts';
import type { Store } from '../../shared/ports/store.ts';

export interface TestDynamo {
  readonly client: DynamoDBClient;
  readonly endpoint: string;
  readonly tableName: string;
  /** Drops this table; the shared server stops shortly after its last table is gone. */
  stop(): Promise<void>;
}

/** Between a file's afterEach and next beforeEach, keep the server instead of restarting it. */
const IDLE_STOP_MS = 250;

let server: Promise<LocalDynamo> | undefined;
let users = 0;
let idleTimer: NodeJS.Timeout | undefined;
let tables = 0;

function acquire(): Promise<LocalDynamo> {
  users++;
  if (idleTimer !== undefined) clearTimeout(idleTimer);
  idleTimer = undefined;
  server ??= startLocalDynamo();
  return server;
}

function release(): void {
  users--;
  if (users > 0 || server === undefined) return;
  const closing = server;
  idleTimer = setTimeout(() => {
    if (users > 0 || server !== closing) return;
    server = undefined;
    // Teardown after the last test: a failure to close an in-memory server has nobody left to report to.
    closing.then((local) => local.stop()).catch(() => undefined);
  }, IDLE_STOP_MS);
  idleTimer.unref();
}

export async function startDynalite(): Promise<TestDynamo> {
  const local = await acquire();
  const tableName = `cairn-test-${process.pid}-${++tables}`;
  try {
    await createLocalTable(local.client, tableName);
  } catch (error) {
    release();
    throw error;
  }
  let stopped = false;
  return {
    client: local.client,
    endpoint: local.endpoint,
    tableName,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await local.client.send(new DeleteTableCommand({ TableName: tableName }));
      } finally {
        release();
      }
    },
  };
}

export type StoredItem = Record<string, AttributeValue>;

/** Every item of the table as stored, ordered by key: to check that nothing, or nothing more, was written. */
export async function tableItems(dynamo: TestDynamo): Promise<StoredItem[]> {
  const items: StoredItem[] = [];
  let start: StoredItem | undefined;
  do {
    const page = await dynamo.client.send(
      new ScanCommand({ TableName: dynamo.tableName, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  const key = (item: StoredItem): [string, string] => [item.PK?.S ?? '', item.SK?.S ?? ''];
  const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return items.sort((a, b) => compare(key(a)[0], key(b)[0]) || compare(key(a)[1], key(b)[1]));
}

export interface TestStore {
  /** The DynamoDB store adapter on a fresh dynalite table. */
  readonly store: Store;
  readonly dynamo: TestDynamo;
  /** `PK SK` of every stored item. */
  keys(): Promise<string[]>;
  stop(): Promise<void>;
}

/** The real store adapter on its own table; `now` is the clock of the timestamps the store writes itself. */
export async function startTestStore(options: { now?: () => Date } = {}): Promise<TestStore> {
  const dynamo = await startDynalite();
  return {
    store: createDynamoStore({
      client: dynamo.client,
      tableName: dynamo.tableName,
      ...(options.now === undefined ? {} : { now: options.now }),
    }),
    dynamo,
    keys: async () => (await tableItems(dynamo)).map((item) => `${item.PK?.S} ${item.SK?.S}`),
    stop: () => dynamo.stop(),
  };
}
