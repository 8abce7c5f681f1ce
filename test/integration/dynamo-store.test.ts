import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { startDynalite } from '../support/dynalite.ts';
import { describeStoreBehaviour } from '../support/store-behaviour.ts';

describeStoreBehaviour('DynamoDB adapter on dynalite', async () => {
  const dynamo = await startDynalite();
  return { store: createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName }), stop: dynamo.stop };
});
