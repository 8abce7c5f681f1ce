/**
 * The store behaviour suite on the embedded stack's DynamoDB client (infra/local/dynalite-in-process.ts): its item
 * commands skip the SDK's pipeline and dynalite's HTTP listener (dynamo-fast-path.ts, dynalite-direct.ts), so the
 * store the embedded runtime uses must keep every condition, read and limit the adapter has on dynalite over HTTP.
 */
import { startInProcessDynamo } from '../../infra/local/dynalite-in-process.ts';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { describeStoreBehaviour } from '../support/store-behaviour.ts';

const TABLE = 'in-process-store';

describeStoreBehaviour('DynamoDB adapter on the in-process dynalite (fast path)', async () => {
  const dynamo = await startInProcessDynamo({ tableName: TABLE });
  return { store: createDynamoStore({ client: dynamo.client, tableName: TABLE }), stop: dynamo.stop };
});
