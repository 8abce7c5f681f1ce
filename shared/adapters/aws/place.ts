/**
 * The deployed place (shared/ports/place.ts): DynamoDB, Step Functions, EventBridge, Bedrock and Secrets Manager,
 * pointed at by the settings. Each adapter is made on first use, with its client; a setting it needs and does not
 * have fails then, naming the variable (CAIRN_TABLE_NAME is not set).
 */
import { requireSetting, type Settings } from '../../config/settings.ts';
import type { Place } from '../../ports/place.ts';
import { deploymentCatalog } from '../catalog-from-env.ts';
import { createBedrockPlanModel, defaultBedrockClient } from './bedrock-plan-model.ts';
import { dynamoDbClient, lambdaClient } from './clients.ts';
import { createDynamoStore } from './dynamo-store.ts';
import { createEventBridgePublisher } from './eventbridge-publisher.ts';
import { createLambdaPlanJobDispatcher } from './lambda-plan-jobs.ts';
import { createSfnExecutions } from './sfn-executions.ts';
import { createStoreReplayGuard } from './webhook-replay-guard.ts';
import { webhookSecretsFor } from './webhook-secrets.ts';

export function awsPlace(settings: Settings): Place {
  const { plannerModelId } = settings;
  return {
    store: () => createDynamoStore({ client: dynamoDbClient(), tableName: requireSetting(settings, 'tableName') }),
    executions: () =>
      createSfnExecutions({
        machineArns: {
          run: requireSetting(settings, 'runMachineArn'),
          step: requireSetting(settings, 'stepMachineArn'),
        },
      }),
    events: () => createEventBridgePublisher({ eventBusName: requireSetting(settings, 'eventBusName') }),
    catalog: () => deploymentCatalog(settings.catalog),
    // Amazon Bedrock when a planner model id is configured; the root falls back to the HTN method library.
    ...(plannerModelId === undefined
      ? {}
      : { planModel: () => createBedrockPlanModel({ client: defaultBedrockClient(), modelId: plannerModelId }) }),
    planJobDispatcher: () =>
      createLambdaPlanJobDispatcher({
        client: lambdaClient(),
        functions: {
          plan: requireSetting(settings, 'plannerFunctionName'),
          replan: requireSetting(settings, 'replannerFunctionName'),
        },
      }),
    webhookSecrets: () => webhookSecretsFor(settings.webhooks.secretPrefix),
    replayGuard: createStoreReplayGuard,
  };
}
