import 'aws-sdk-client-mock-vitest/extend';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import type { LambdaEvent } from 'hono/aws-lambda';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler, defaultDeps } from '../../../functions/api.ts';
import { signWebhook } from '../../../shared/webhooks/signature.ts';
import { fixture } from '../api/webhook-support.ts';

const ENV = {
  CAIRN_TABLE_NAME: 'cairn',
  CAIRN_RUN_MACHINE_ARN: 'arn:aws:states:us-east-1:123456789012:stateMachine:run',
  CAIRN_STEP_MACHINE_ARN: 'arn:aws:states:us-east-1:123456789012:stateMachine:step',
  CAIRN_EVENT_BUS_NAME: 'cairn-bus',
  CAIRN_WEBHOOK_SECRET_PREFIX: 'cairn/test/webhooks',
  CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS: '120',
};
const SECRET = 'deployed-secret';

const secretsManager = mockClient(SecretsManagerClient);
const eventbridge = mockClient(EventBridgeClient);
const dynamo = mockClient(DynamoDBClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  secretsManager.restore();
  eventbridge.restore();
  dynamo.restore();
});

/** An API Gateway HTTP API (payload 2.0) webhook delivery: no authorizer on this route. */
function webhookEvent(source: string, body: Uint8Array, headers: Record<string, string>, base64 = false) {
  const path = `/webhooks/${source}`;
  return {
    version: '2.0',
    routeKey: 'POST /webhooks/{source}',
    rawPath: path,
    rawQueryString: '',
    // API Gateway lower-cases header names.
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])),
    body: base64 ? Buffer.from(body).toString('base64') : new TextDecoder().decode(body),
    isBase64Encoded: base64,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '10.0.0.1', userAgent: 'sender' },
      requestId: 'req',
      routeKey: 'POST /webhooks/{source}',
      stage: '$default',
      time: '01/Jan/2030:00:00:00 +0000',
      timeEpoch: 1_893_456_000_000,
    },
  } as unknown as LambdaEvent;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

beforeEach(() => {
  vi.stubEnv('AWS_REGION', 'us-east-1');
  secretsManager.reset();
  eventbridge.reset();
  dynamo.reset();
  secretsManager
    .on(GetSecretValueCommand, { SecretId: 'cairn/test/webhooks/prices' })
    .resolves({ SecretString: SECRET });
  secretsManager
    .on(GetSecretValueCommand, { SecretId: 'cairn/test/webhooks/payroll' })
    .rejects(new ResourceNotFoundException({ message: 'not found', $metadata: {} }));
  // Outside the function's grant (cairn/test/webhooks/<source>-??????): Secrets Manager answers AccessDenied.
  secretsManager
    .on(GetSecretValueCommand, { SecretId: 'cairn/test/webhooks/ledger' })
    .rejects(Object.assign(new Error('not authorized to perform GetSecretValue'), { name: 'AccessDeniedException' }));
  secretsManager
    .on(GetSecretValueCommand, { SecretId: 'cairn/test/webhooks/billing' })
    .rejects(Object.assign(new Error('rate exceeded'), { name: 'ThrottlingException', $retryable: {} }));
  eventbridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0 });
  dynamo.on(PutItemCommand).resolves({});
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('api Lambda webhooks', () => {
  it('builds the webhook dependencies from the environment', () => {
    const deps = defaultDeps(ENV);

    expect(deps.events).toBeDefined();
    expect(deps.webhooks?.replayWindowSeconds).toBe(120);
    expect(() => defaultDeps({ ...ENV, CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS: 'soon' })).toThrow(/REPLAY_WINDOW/);
  });

  it.each([
    ['text', false],
    ['base64', true],
  ])('verifies a %s body with the Secrets Manager secret and puts ResourceChanged on the bus', async (_n, base64) => {
    const handler = createHandler(defaultDeps(ENV));
    const body = fixture('one-key.json');

    const answer = await handler(webhookEvent('prices', body, signWebhook(SECRET, body, nowSeconds()), base64));

    expect(answer.statusCode).toBe(202);
    expect(eventbridge).toHaveReceivedCommandTimes(PutEventsCommand, 1);
    const entry = eventbridge.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries?.[0];
    expect(entry).toMatchObject({ EventBusName: 'cairn-bus', Source: 'cairn', DetailType: 'ResourceChanged' });
    expect(JSON.parse(entry?.Detail ?? '{}')).toMatchObject({
      resourceKey: 's3://acme-data/prices/2030-01.csv',
      source: 'prices',
    });
    // The replay memory is a conditional put of an idempotency record.
    expect(dynamo).toHaveReceivedCommandTimes(PutItemCommand, 1);
    expect(JSON.stringify(dynamo.commandCalls(PutItemCommand)[0]?.args[0].input.Item)).toContain('webhook#prices#');
  });

  it.each([
    ['whose secret does not exist (ResourceNotFound)', 'payroll'],
    ['whose secret the function may not read (AccessDenied)', 'ledger'],
  ])('refuses a source %s with the generic 401 and touches neither bus nor table', async (_name, source) => {
    const handler = createHandler(defaultDeps(ENV));
    const body = fixture('one-key.json');

    const unknown = await handler(webhookEvent(source, body, signWebhook(SECRET, body, nowSeconds())));
    const badSignature = await handler(webhookEvent('prices', body, signWebhook('wrong', body, nowSeconds())));

    expect([unknown.statusCode, badSignature.statusCode]).toEqual([401, 401]);
    expect(unknown.body).toBe(badSignature.body);
    expect(JSON.parse(unknown.body)).toEqual({ error: { code: 'E_UNAUTHORIZED', message: 'invalid signature' } });
    expect(eventbridge).toHaveReceivedCommandTimes(PutEventsCommand, 0);
    expect(dynamo).toHaveReceivedCommandTimes(PutItemCommand, 0);
  });

  it('answers 503, not 401, when Secrets Manager throttles, so the sender tries again', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const handler = createHandler(defaultDeps(ENV));
    const body = fixture('one-key.json');

    const answer = await handler(webhookEvent('billing', body, signWebhook(SECRET, body, nowSeconds())));

    expect(answer.statusCode).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'E_UNAVAILABLE' } });
  });
});
