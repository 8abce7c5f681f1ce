import { createServer, type Server, type Socket } from 'node:net';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import * as clients from '../../../../shared/adapters/aws/clients.ts';
import {
  AWS_CLIENT_TIMEOUTS,
  type AwsService,
  bedrockRuntimeClient,
  dynamoDbClient,
  dynamoDbStreamsClient,
  eventBridgeClient,
  lambdaClient,
  requestHandlerOptions,
  schedulerClient,
  secretsManagerClient,
  sfnClient,
  sqsClient,
  withTimeouts,
} from '../../../../shared/adapters/aws/clients.ts';

/** What a client's request handler was configured with (resolved as on its first call). */
async function handlerConfig(client: { config: { requestHandler: unknown } }): Promise<Record<string, unknown>> {
  const handler = client.config.requestHandler as {
    configProvider?: Promise<Record<string, unknown>>;
    httpHandlerConfigs(): Record<string, unknown>;
  };
  return (await handler.configProvider) ?? handler.httpHandlerConfigs();
}

const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };

describe('requestHandlerOptions', () => {
  it('gives every service a connection and a request timeout that throws', () => {
    for (const service of Object.keys(AWS_CLIENT_TIMEOUTS) as AwsService[]) {
      const options = requestHandlerOptions(service);
      expect(options.connectionTimeout, service).toBeGreaterThan(0);
      expect(options.requestTimeout, service).toBeGreaterThan(0);
      expect(options.throwOnRequestTimeout, service).toBe(true);
    }
  });

  it('bounds a synchronous Lambda invocation by a step, not by an API call', () => {
    expect(requestHandlerOptions('lambda-invoke').requestTimeout).toBeGreaterThan(
      requestHandlerOptions('lambda').requestTimeout,
    );
  });

  it('takes overrides over the service defaults', () => {
    expect(requestHandlerOptions('dynamodb', { requestTimeoutMs: 7 })).toMatchObject({
      requestTimeout: 7,
      connectionTimeout: AWS_CLIENT_TIMEOUTS.dynamodb.connectionTimeoutMs,
    });
  });
});

describe('withTimeouts', () => {
  it('keeps a request handler the caller already chose', () => {
    const own = { handle: async () => ({ response: {} }) };
    expect(withTimeouts('sfn', { requestHandler: own }).requestHandler).toBe(own);
  });
});

describe('the client factory', () => {
  const made = [
    ['dynamodb', () => dynamoDbClient({ region: 'us-east-1' })],
    ['dynamodbstreams', () => dynamoDbStreamsClient({ region: 'us-east-1' })],
    ['sfn', () => sfnClient({ region: 'us-east-1' })],
    ['eventbridge', () => eventBridgeClient({ region: 'us-east-1' })],
    ['secretsmanager', () => secretsManagerClient({ region: 'us-east-1' })],
    ['lambda', () => lambdaClient({ region: 'us-east-1' })],
    ['lambda-invoke', () => lambdaClient({ region: 'us-east-1' }, 'invoke')],
    ['bedrock', () => bedrockRuntimeClient({ region: 'us-east-1' })],
    ['scheduler', () => schedulerClient({ region: 'us-east-1' })],
    ['sqs', () => sqsClient({ region: 'us-east-1' })],
  ] as const;

  it('covers every client factory and every service', () => {
    const factories = Object.entries(clients).filter(
      ([name, value]) => /Client$/.test(name) && typeof value === 'function',
    );
    expect(factories.map(([name]) => name).sort()).toEqual([
      'bedrockRuntimeClient',
      'dynamoDbClient',
      'dynamoDbStreamsClient',
      'eventBridgeClient',
      'lambdaClient',
      'schedulerClient',
      'secretsManagerClient',
      'sfnClient',
      'sqsClient',
    ]);
    expect(new Set(made.map(([service]) => service))).toEqual(new Set(Object.keys(AWS_CLIENT_TIMEOUTS)));
  });

  it.each(made)('sets the %s timeouts on the client it makes', async (service, make) => {
    const client = make();
    const config = await handlerConfig(client);
    expect(config).toMatchObject({
      connectionTimeout: AWS_CLIENT_TIMEOUTS[service].connectionTimeoutMs,
      requestTimeout: AWS_CLIENT_TIMEOUTS[service].requestTimeoutMs,
      throwOnRequestTimeout: true,
    });
    client.destroy();
  });

  describe('against an endpoint that accepts and never answers', () => {
    let server: Server | undefined;
    const sockets = new Set<Socket>();
    afterEach(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    });

    it('fails the call with TimeoutError instead of waiting forever', async () => {
      server = createServer((socket) => {
        sockets.add(socket);
        socket.on('data', () => {});
      });
      await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      const client = dynamoDbClient({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        credentials: CREDENTIALS,
        maxAttempts: 1,
        requestHandler: requestHandlerOptions('dynamodb', { requestTimeoutMs: 100 }),
      });
      const call = client.send(new GetItemCommand({ TableName: 't', Key: { PK: { S: 'a' } } }));
      await expect(call).rejects.toMatchObject({ name: 'TimeoutError' });
      client.destroy();
    });
  });
});
