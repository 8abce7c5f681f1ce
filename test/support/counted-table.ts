/**
 * An in-process DynamoDB table whose writes are counted by key (the embedded stack's spy on DynamoDB commands,
 * infra/local/stack/instrument.ts), and cold shells on it: each loads its runs from the table, as a decider in another
 * container would. For tests that count what the real shell, store and run log write.
 */
import { afterAll, beforeAll } from 'vitest';
import { startInProcessDynamo } from '../../infra/local/dynalite-in-process.ts';
import { writtenKeys } from '../../infra/local/stack/instrument.ts';
import { createDynamoRunLogOf, createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createRunShell } from '../../shared/services/runs/shell.ts';
import { QUIET_SHELL } from './decider.ts';

export interface CountedTable {
  /** Every key written since the table started, in order. */
  readonly writes: { PK: string; SK: string }[];
  store(): Store;
  /** A shell of its own on the table (a cold decider). */
  shellOn(store: Store): ReturnType<typeof createRunShell>;
}

/** Starts the table before the file's tests and stops it after them. */
export function useCountedTable(tableName: string): CountedTable {
  const writes: { PK: string; SK: string }[] = [];
  let dynamo: Awaited<ReturnType<typeof startInProcessDynamo>> | undefined;
  beforeAll(async () => {
    dynamo = await startInProcessDynamo({
      tableName,
      onCommand: (command, input) => writes.push(...writtenKeys(command, input)),
    });
  });
  afterAll(() => dynamo?.stop());
  const client = () => {
    if (dynamo === undefined) throw new Error('the counted table is used before it started');
    return dynamo.client;
  };
  return {
    writes,
    store: () => createDynamoStore({ client: client(), tableName }),
    shellOn: (store) =>
      createRunShell({
        store,
        runLog: createDynamoRunLogOf({ client: client(), tableName }, store),
        ...QUIET_SHELL,
        clock: () => new Date(),
      }),
  };
}
