import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bindingsFromConfig } from '../../../shared/adapters/bindings.ts';
import { createMcpConnections } from '../../../shared/adapters/mcp/connections.ts';
import { mcpCapability } from '../../../shared/adapters/mcp/mcp-capability.ts';
import { createSecretResolver, SECRET_CACHE_MS } from '../../../shared/adapters/secret-values.ts';
import { parseBindingsConfig } from '../../../shared/capabilities/registry.ts';
import { secretRefSchema } from '../../../shared/capabilities/secret-ref.ts';
import { aCall, caught, codeOf } from '../../support/capability-call.ts';
import { json, startHttpServer, type TestHttpServer } from '../../support/http-server.ts';
import { json as mcpJson, startMcpServer } from '../../support/mcp-server.ts';

const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:crm-token-AbCdEf';
const sm = mockClient(SecretsManagerClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  sm.restore();
});
afterEach(() => {
  sm.reset();
});

const resolverWith = (now: () => number = () => 0) =>
  createSecretResolver({
    env: { CRM_TOKEN: 'from-env' },
    readText: async (path) => {
      if (path === '/run/secrets/token') return 'from-file\n';
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    },
    secretsClient: () => new SecretsManagerClient({ region: 'us-east-1' }),
    now,
  });

describe('secretRefSchema', () => {
  it('takes a complete secret ARN, an environment variable or a file, each with an optional prefix', () => {
    for (const ref of [
      { secret: ARN, field: 'token', prefix: 'Bearer ' },
      { env: 'CRM_TOKEN' },
      { file: '/run/secrets/token', prefix: 'Bearer ' },
    ])
      expect(secretRefSchema.safeParse(ref).success, JSON.stringify(ref)).toBe(true);
  });

  it('refuses a partial ARN, a variable name a shell could not set, and two sources at once', () => {
    for (const ref of [
      { secret: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:crm-token' },
      { secret: 'crm-token' },
      { env: 'CRM-TOKEN' },
      { env: 'A', file: '/x' },
      { vault: 'x' },
    ])
      expect(secretRefSchema.safeParse(ref).success, JSON.stringify(ref)).toBe(false);
  });

  it('is how the bindings configuration takes headers, MCP environments and model keys', () => {
    const config = parseBindingsConfig({
      'tool:a': { kind: 'http', url: 'https://a.example.com', headers: { authorization: { env: 'CRM_TOKEN' } } },
      'tool:b': { kind: 'mcp', transport: 'stdio', command: 'node', tool: 'b', env: { TOKEN: { file: '/t' } } },
      'agent:c': { kind: 'openai', baseUrl: 'https://c.example.com/v1', model: 'm', apiKey: { secret: ARN } },
    });
    expect(Object.keys(config)).toHaveLength(3);
    expect(() =>
      parseBindingsConfig({
        'agent:c': {
          kind: 'openai',
          baseUrl: 'https://c.example.com/v1',
          model: 'm',
          apiKey: { secret: ARN },
          apiKeyEnv: 'K',
        },
      }),
    ).toThrow(/one of apiKey, apiKeyEnv and apiKeySecret/);
  });
});

describe('createSecretResolver', () => {
  it('reads an environment variable and a file (trimmed), with the prefix in front', async () => {
    const secrets = resolverWith();
    expect(await secrets.resolve({ env: 'CRM_TOKEN', prefix: 'Bearer ' })).toBe('Bearer from-env');
    expect(await secrets.resolve({ file: '/run/secrets/token' })).toBe('from-file');
  });

  it("reads a secret's string, or one field of its JSON", async () => {
    sm.on(GetSecretValueCommand, { SecretId: ARN }).resolves({ SecretString: '{"token":"t0k","other":"x"}' });
    const secrets = resolverWith();
    expect(await secrets.resolve({ secret: ARN })).toBe('{"token":"t0k","other":"x"}');
    expect(await secrets.resolve({ secret: ARN, field: 'token', prefix: 'Bearer ' })).toBe('Bearer t0k');
  });

  it('asks Secrets Manager again only once the value is older than the cache time', async () => {
    let time = 0;
    sm.on(GetSecretValueCommand).resolvesOnce({ SecretString: 'one' }).resolves({ SecretString: 'two' });
    const secrets = resolverWith(() => time);
    expect(await secrets.resolve({ secret: ARN })).toBe('one');
    time = SECRET_CACHE_MS - 1;
    expect(await secrets.resolve({ secret: ARN })).toBe('one');
    time = SECRET_CACHE_MS;
    expect(await secrets.resolve({ secret: ARN })).toBe('two');
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('does not keep a failed read: the next call asks again', async () => {
    sm.on(GetSecretValueCommand)
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }))
      .resolves({ SecretString: 'late' });
    const secrets = resolverWith();
    await expect(secrets.resolve({ secret: ARN })).rejects.toMatchObject({
      name: 'SecretUnavailableError',
      retryable: true,
    });
    expect(await secrets.resolve({ secret: ARN })).toBe('late');
  });

  it('says where a value was looked for, never what it is, and whether trying again may help', async () => {
    sm.on(GetSecretValueCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    const secrets = resolverWith();
    await expect(secrets.resolve({ env: 'MISSING' })).rejects.toMatchObject({
      message: 'the environment variable MISSING is not set',
      retryable: false,
    });
    await expect(secrets.resolve({ file: '/nope' })).rejects.toMatchObject({ retryable: false });
    await expect(secrets.resolve({ secret: ARN })).rejects.toMatchObject({
      message: expect.stringContaining(ARN),
      retryable: false,
    });
  });
});

describe('bindings with values by reference', () => {
  let server: TestHttpServer;
  beforeAll(async () => {
    server = await startHttpServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('sends an HTTP binding its headers read from where they are named', async () => {
    server.respondWith(json(200, { value: 'ok' }));
    const bindings = bindingsFromConfig(
      {
        'tool:conformance.echo': {
          kind: 'http',
          url: server.url,
          internal: true,
          headers: { authorization: { env: 'CRM_TOKEN', prefix: 'Bearer ' }, accept: 'application/json' },
        },
      },
      { apiKeys: { env: { CRM_TOKEN: 'tok' } } },
    );
    await bindings['tool:conformance.echo']?.invoke(aCall());
    expect(server.requests.at(-1)?.headers.authorization).toBe('Bearer tok');
  });

  it('fails the call with E_SECRET_UNAVAILABLE, and sends nothing, when a header cannot be read', async () => {
    const before = server.requests.length;
    const bindings = bindingsFromConfig(
      {
        'tool:conformance.echo': {
          kind: 'http',
          url: server.url,
          internal: true,
          headers: { authorization: { env: 'UNSET' } },
        },
      },
      { apiKeys: { env: {} } },
    );
    const error = await caught(bindings['tool:conformance.echo']?.invoke(aCall()) ?? Promise.resolve());
    expect(codeOf(error)).toBe('E_SECRET_UNAVAILABLE');
    expect(server.requests.length).toBe(before);
  });

  it('sends an MCP server over HTTP its headers read by reference, on every request', async () => {
    const mcp = await startMcpServer({ tools: [{ name: 'echo', answer: (args) => mcpJson({ got: args }) }] });
    const connections = createMcpConnections({
      secrets: () => createSecretResolver({ env: { CRM_TOKEN: 'mcp-tok' } }),
    });
    try {
      const binding = mcpCapability({
        binding: {
          kind: 'mcp',
          transport: 'http',
          url: mcp.url,
          tool: 'echo',
          headers: { 'x-api-key': { env: 'CRM_TOKEN' } },
        },
        connections,
      });
      await binding.invoke(aCall());
      expect(mcp.requestHeaders.length).toBeGreaterThan(1);
      for (const headers of mcp.requestHeaders) expect(headers['x-api-key']).toBe('mcp-tok');
    } finally {
      await connections.close();
      await mcp.close();
    }
  });
});
