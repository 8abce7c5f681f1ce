/**
 * The deployed place (shared/ports/place.ts): DynamoDB (and its stream), SQS, Step Functions, EventBridge, Bedrock and
 * Secrets Manager, pointed at by the settings. Each adapter is made on first use, with its client; a setting it needs
 * and does not have fails then, naming the variable (CAIRN_TABLE_NAME is not set).
 */

import { randomUUID } from 'node:crypto';
import { requireSetting, type Settings } from '../../config/settings.ts';
import type { Place } from '../../ports/place.ts';
import { deploymentCatalog } from '../catalog-from-env.ts';
import { createBedrockPlanModel, defaultBedrockClient } from './bedrock-plan-model.ts';
import { dynamoDbClient, dynamoDbStreamsClient, lambdaClient, schedulerClient, sqsClient } from './clients.ts';
import { runLayoutsOf } from './dynamo-layouts.ts';
import { createDynamoReplies } from './dynamo-replies.ts';
import { createDynamoRetentionOf, createDynamoRunLogOf, createDynamoStore } from './dynamo-store.ts';
import { createEventBridgePublisher } from './eventbridge-publisher.ts';
import { createLambdaPlanJobDispatcher } from './lambda-plan-jobs.ts';
import { createDynamoStreamReader, createSqsDeadLetters } from './outbox-dead-letters.ts';
import { createSchedulerTimers } from './scheduler-timers.ts';
import { createSfnExecutions } from './sfn-executions.ts';
import { createSqsMailbox } from './sqs-mailbox.ts';
import { createStoreReplayGuard } from './webhook-replay-guard.ts';
import { webhookSecretsFor } from './webhook-secrets.ts';

export function awsPlace(settings: Settings): Place {
  const { plannerModelId } = settings;
  const dynamo = once(() => ({
    client: dynamoDbClient(),
    tableName: requireSetting(settings, 'tableName'),
    retentionSeconds: settings.retentionSeconds,
  }));
  const replies = once(() =>
    createDynamoReplies({
      ...dynamo(),
      now: () => new Date(),
      layouts: runLayoutsOf(dynamo().client, dynamo().tableName),
    }),
  );
  return {
    store: () => createDynamoStore(dynamo()),
    runLog: (store) => createDynamoRunLogOf(dynamo(), store),
    retention: () => createDynamoRetentionOf(dynamo()),
    outboxDeadLetters: () => ({
      queue: createSqsDeadLetters({ client: sqsClient(), queueUrl: requireSetting(settings, 'outboxDeadLettersUrl') }),
      stream: createDynamoStreamReader({ client: dynamoDbStreamsClient(), clock: () => new Date() }),
    }),
    // The decider Lambda reads the queue (functions/decider.ts): here the shell is only the place's to name.
    // Both are made on first use, so a function that never sends a command needs none of their settings.
    mailbox: () => {
      const sqs = once(() =>
        createSqsMailbox({
          client: sqsClient(),
          queueUrl: requireSetting(settings, 'mailboxUrl'),
          replies: replies(),
          newId: () => randomUUID(),
        }),
      );
      return {
        send: (runId, command) => sqs().send(runId, command),
        ask: (runId, command, options) => sqs().ask(runId, command, options),
        answer: (id) => sqs().answer(id),
      };
    },
    replies,
    timers: (mailbox) => {
      const scheduler = once(() =>
        createSchedulerTimers({
          client: schedulerClient(),
          queueArn: requireSetting(settings, 'mailboxArn'),
          roleArn: requireSetting(settings, 'schedulerRoleArn'),
          groupName: requireSetting(settings, 'scheduleGroup'),
          mailbox,
        }),
      );
      return { schedule: (runId, name, at, command) => scheduler().schedule(runId, name, at, command) };
    },
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

function once<T>(make: () => T): () => T {
  let made: { readonly value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}
