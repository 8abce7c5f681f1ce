/**
 * Every AWS SDK client cairn makes is made here, with a connection timeout and a request timeout, so a call that
 * hangs (a half-open connection, a service that stopped answering) fails in bounded time with the SDK's
 * `TimeoutError`, which the SDK's retry strategy and cairn's error taxonomy (shared/errors.ts,
 * `isTransientPlatformError`) both treat as "try again". Without them the SDK waits forever by default, and a
 * Lambda spends its whole timeout on one call that never answers.
 *
 * The request timeout covers the whole exchange, request sent to response read (`throwOnRequestTimeout`: without it
 * the SDK only logs a warning when it is passed). Each service gets the bound its calls need: the store, the state
 * machines, the bus and the secrets answer in milliseconds; a synchronous Lambda invocation (a `lambda` binding) may
 * take as long as a step; a Bedrock model as long as a plan. `lint` (test/lint/aws-clients.test.ts) keeps every
 * `new …Client(` of the deployed path in this file.
 */
import { BedrockRuntimeClient, type BedrockRuntimeClientConfig } from '@aws-sdk/client-bedrock-runtime';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient, type DynamoDBStreamsClientConfig } from '@aws-sdk/client-dynamodb-streams';
import { EventBridgeClient, type EventBridgeClientConfig } from '@aws-sdk/client-eventbridge';
import { LambdaClient, type LambdaClientConfig } from '@aws-sdk/client-lambda';
import { SchedulerClient, type SchedulerClientConfig } from '@aws-sdk/client-scheduler';
import { SecretsManagerClient, type SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { SFNClient, type SFNClientConfig } from '@aws-sdk/client-sfn';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { STEP_EXECUTOR_TIMEOUT_SECONDS } from '../../config/defaults.ts';

export interface ClientTimeouts {
  /** Connecting (TCP and TLS) may take this long. */
  readonly connectionTimeoutMs: number;
  /** One attempt, request sent to response read, may take this long; the SDK then throws `TimeoutError`. */
  readonly requestTimeoutMs: number;
}

/** The services cairn calls. */
export type AwsService =
  | 'dynamodb'
  | 'dynamodbstreams'
  | 'sfn'
  | 'eventbridge'
  | 'secretsmanager'
  | 'lambda'
  | 'lambda-invoke'
  | 'bedrock'
  | 'sqs'
  | 'scheduler';

/** Connecting to a regional endpoint from a Lambda takes milliseconds; two seconds means it is not going to. */
const CONNECT_MS = 2_000;
/** The planner's Lambda timeout: a model may think that long about a plan (infra/constructs/functions.ts). */
const MODEL_CALL_MS = 300_000;

export const AWS_CLIENT_TIMEOUTS: Readonly<Record<AwsService, ClientTimeouts>> = Object.freeze({
  dynamodb: { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: 10_000 },
  dynamodbstreams: { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: 10_000 },
  sfn: { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: 10_000 },
  eventbridge: { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: 10_000 },
  secretsmanager: { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: 5_000 },
  // Lambda's own API (an asynchronous invocation: a planning job): answered at once.
  lambda: { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: 10_000 },
  // A synchronous invocation (a `lambda` binding) answers when the function does: at most one step's time.
  'lambda-invoke': { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: STEP_EXECUTOR_TIMEOUT_SECONDS * 1000 },
  bedrock: { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: MODEL_CALL_MS },
  sqs: { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: 10_000 },
  scheduler: { connectionTimeoutMs: CONNECT_MS, requestTimeoutMs: 10_000 },
});

/** The `requestHandler` options (the SDK's NodeHttpHandler takes them as they are) that bound a service's calls. */
export function requestHandlerOptions(service: AwsService, overrides: Partial<ClientTimeouts> = {}) {
  const { connectionTimeoutMs, requestTimeoutMs } = { ...AWS_CLIENT_TIMEOUTS[service], ...overrides };
  return {
    connectionTimeout: connectionTimeoutMs,
    requestTimeout: requestTimeoutMs,
    throwOnRequestTimeout: true,
  } as const;
}

/** A client configuration with the service's timeouts in it (a `requestHandler` already given is kept). */
export function withTimeouts<C extends { requestHandler?: unknown }>(
  service: AwsService,
  config: C,
  overrides: Partial<ClientTimeouts> = {},
): C {
  if (config.requestHandler !== undefined) return config;
  return { ...config, requestHandler: requestHandlerOptions(service, overrides) };
}

export const dynamoDbClient = (config: DynamoDBClientConfig = {}): DynamoDBClient =>
  new DynamoDBClient(withTimeouts('dynamodb', config));

/** DynamoDB Streams: the outbox redrive reads back the records of a stream batch the relay gave up on. */
export const dynamoDbStreamsClient = (config: DynamoDBStreamsClientConfig = {}): DynamoDBStreamsClient =>
  new DynamoDBStreamsClient(withTimeouts('dynamodbstreams', config));

export const sfnClient = (config: SFNClientConfig = {}): SFNClient => new SFNClient(withTimeouts('sfn', config));

export const eventBridgeClient = (config: EventBridgeClientConfig = {}): EventBridgeClient =>
  new EventBridgeClient(withTimeouts('eventbridge', config));

export const secretsManagerClient = (config: SecretsManagerClientConfig = {}): SecretsManagerClient =>
  new SecretsManagerClient(withTimeouts('secretsmanager', config));

/** SQS: the runs' mailbox (commands to a run's decider). */
export const sqsClient = (config: SQSClientConfig = {}): SQSClient => new SQSClient(withTimeouts('sqs', config));

/** EventBridge Scheduler: the notifier's reminder schedules, the runs' timers. */
export const schedulerClient = (config: SchedulerClientConfig = {}): SchedulerClient =>
  new SchedulerClient(withTimeouts('scheduler', config));

/** `invoke`: a client for synchronous invocations (bindings), bounded by a step's time instead of an API call's. */
export const lambdaClient = (config: LambdaClientConfig = {}, use: 'api' | 'invoke' = 'api'): LambdaClient =>
  new LambdaClient(withTimeouts(use === 'invoke' ? 'lambda-invoke' : 'lambda', config));

export const bedrockRuntimeClient = (config: BedrockRuntimeClientConfig = {}): BedrockRuntimeClient =>
  new BedrockRuntimeClient(withTimeouts('bedrock', config));
