/**
 * dynalite for integration tests: one in-process server per test file (vitest gives every file its own module
 * instance), a fresh table per call so tests never see each other's items.
 */
import { DeleteTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createLocalTable, type LocalDynamo, startLocalDynamo } from '../../shared/adapters/local/dynalite-server.ts';

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
