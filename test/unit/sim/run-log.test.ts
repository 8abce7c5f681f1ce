/** The RunLog behaviour suite on the in-memory adapter (the simulation's) and on the DynamoDB one (dynalite). */
import { afterAll, beforeAll, describe } from 'vitest';
import { createDynamoRunLogOf, createDynamoStore } from '../../../shared/adapters/aws/dynamo-store.ts';
import { createMemoryRunLog } from '../../../shared/adapters/memory/run-log.ts';
import { createMemoryStore } from '../../../shared/adapters/memory/store.ts';
import { startDynalite, type TestDynamo } from '../../support/dynalite.ts';
import { runLogBehaviour } from '../../support/run-log-behaviour.ts';

describe('the in-memory run log', () => {
  runLogBehaviour(async () => {
    const store = createMemoryStore();
    return { store, runLog: createMemoryRunLog(store) };
  });
});

describe('the DynamoDB run log (dynalite)', () => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(() => dynamo.stop());
  runLogBehaviour(async () => {
    const options = { client: dynamo.client, tableName: dynamo.tableName };
    const store = createDynamoStore(options);
    return { store, runLog: createDynamoRunLogOf(options, store) };
  });
});
