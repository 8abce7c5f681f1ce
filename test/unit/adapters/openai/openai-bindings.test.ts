import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bindingsFromConfig } from '../../../../shared/adapters/bindings.ts';
import { API_KEY_CACHE_MS, apiKeyFromSecretValue, apiKeyOf } from '../../../../shared/adapters/openai/api-key.ts';
import { parseBindingsConfig } from '../../../../shared/capabilities/registry.ts';
import { aCall, caught, codeOf } from '../../../support/capability-call.ts';
import { completion, type FakeOpenAI, startFakeOpenAI } from '../../../support/fake-openai-server.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({ reply: () => completion({ output: { value: 1 }, confidence: 1 }) });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
});

const secrets = mockClient(SecretsManagerClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  secrets.restore();
});
beforeEach(() => {
  secrets.reset();
});

describe('the openai binding configuration', () => {
  it('accepts an endpoint, a model and where its key comes from', () => {
    const config = {
      'agent:a': { kind: 'openai', baseUrl: 'http://localhost:11434/v1', model: 'llama3.1' },
      'agent:b': {
        kind: 'openai',
        baseUrl: 'https://api.example.com/v1',
        model: 'm',
        apiKeyEnv: 'EXAMPLE_API_KEY',
        maxTokens: 1000,
        temperature: 0.2,
        timeoutMs: 30_000,
      },
      'agent:c': { kind: 'openai', baseUrl: 'https://api.example.com/v1', model: 'm', apiKeySecret: 'cairn/prod/m' },
    };
    expect(parseBindingsConfig(config)).toEqual(config);
  });

  it.each([
    ['a tool target', { 'tool:a': { kind: 'openai', baseUrl: 'http://localhost:1/v1', model: 'm' } }],
    ['no model', { 'agent:a': { kind: 'openai', baseUrl: 'http://localhost:1/v1' } }],
    ['a URL that is not http(s)', { 'agent:a': { kind: 'openai', baseUrl: 'file:///v1', model: 'm' } }],
    ['a key in the configuration', { 'agent:a': { kind: 'openai', baseUrl: 'http://h/v1', model: 'm', apiKey: 'k' } }],
    ['a bad variable name', { 'agent:a': { kind: 'openai', baseUrl: 'http://h/v1', model: 'm', apiKeyEnv: 'A-B' } }],
    [
      'two key sources',
      { 'agent:a': { kind: 'openai', baseUrl: 'http://h/v1', model: 'm', apiKeyEnv: 'K', apiKeySecret: 's' } },
    ],
  ])('refuses %s', (_name, config) => {
    expect(() => parseBindingsConfig(config)).toThrow(/invalid capability bindings/);
  });
});

describe('bindingsFromConfig with openai bindings', () => {
  it('builds an agent on the endpoint that sends the key of the variable apiKeyEnv names', async () => {
    const bindings = bindingsFromConfig(
      { 'agent:a': { kind: 'openai', baseUrl: fake.baseUrl, model: 'm', apiKeyEnv: 'MY_KEY' } },
      { apiKeys: { env: { MY_KEY: 'sk-from-env' } } },
    );

    const result = await bindings['agent:a']?.invoke(aCall({ target: 'agent:a' }));

    expect(bindings['agent:a']?.kind).toBe('openai');
    expect(result?.output).toEqual({ value: 1 });
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-from-env');
    expect(fake.requests[0]?.body.model).toBe('m');
  });

  it('fails at once, naming the variable, when apiKeyEnv names an unset variable', () => {
    expect(() =>
      bindingsFromConfig(
        { 'agent:a': { kind: 'openai', baseUrl: fake.baseUrl, model: 'm', apiKeyEnv: 'MISSING_KEY' } },
        { apiKeys: { env: {} } },
      ),
    ).toThrow(/MISSING_KEY/);
  });

  it('reads the key of apiKeySecret from Secrets Manager on the first call, once for several calls', async () => {
    secrets.on(GetSecretValueCommand, { SecretId: 'cairn/test/model' }).resolves({ SecretString: '{"apiKey":"sk-s"}' });
    const bindings = bindingsFromConfig(
      { 'agent:a': { kind: 'openai', baseUrl: fake.baseUrl, model: 'm', apiKeySecret: 'cairn/test/model' } },
      { apiKeys: { secretsClient: () => new SecretsManagerClient({ region: 'eu-west-1' }) } },
    );
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(0);

    await bindings['agent:a']?.invoke(aCall({ target: 'agent:a' }));
    await bindings['agent:a']?.invoke(aCall({ target: 'agent:a' }));

    expect(fake.requests.map((r) => r.headers.authorization)).toEqual(['Bearer sk-s', 'Bearer sk-s']);
    expect(secrets.commandCalls(GetSecretValueCommand)).toHaveLength(1);
  });

  it('fails a call permanently when the secret holds no key, and retryably when it cannot be read', async () => {
    secrets.on(GetSecretValueCommand).resolvesOnce({ SecretString: '{"other": "x"}' }).rejects(new Error('throttled'));
    const config = { 'agent:a': { kind: 'openai', baseUrl: fake.baseUrl, model: 'm', apiKeySecret: 's' } };
    const deps = { apiKeys: { secretsClient: () => new SecretsManagerClient({ region: 'eu-west-1' }) } };

    const empty = await caught(bindingsFromConfig(config, deps)['agent:a']?.invoke(aCall()) ?? Promise.resolve());
    const unreadable = await caught(bindingsFromConfig(config, deps)['agent:a']?.invoke(aCall()) ?? Promise.resolve());

    expect([codeOf(empty), empty.retryable]).toEqual(['E_CAPABILITY_REJECTED', false]);
    expect([codeOf(unreadable), unreadable.retryable]).toEqual(['E_CAPABILITY_UNAVAILABLE', true]);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('apiKeyOf', () => {
  it('prefers the key itself, then the secret, then the variable; none when no source is given', () => {
    expect(apiKeyOf({ apiKey: 'k', apiKeyEnv: 'V' }, { env: { V: 'v' } })).toBe('k');
    expect(apiKeyOf({ apiKeyEnv: 'V' }, { env: { V: ' v ' } })).toBe('v');
    expect(typeof apiKeyOf({ apiKeySecret: 's' })).toBe('function');
    expect(apiKeyOf({})).toBeUndefined();
  });

  it('reads a rotated secret again once the cache time has passed, and a failed read on the next call', async () => {
    let now = 0;
    secrets
      .on(GetSecretValueCommand)
      .rejectsOnce(new Error('throttled'))
      .resolvesOnce({ SecretString: 'first' })
      .resolves({ SecretString: 'second' });
    const key = apiKeyOf(
      { apiKeySecret: 's' },
      { secretsClient: () => new SecretsManagerClient({ region: 'eu-west-1' }), now: () => now },
    ) as () => Promise<string>;

    await expect(key()).rejects.toMatchObject({ name: 'ModelApiKeyError', retryable: true });
    await expect(key()).resolves.toBe('first');
    now = API_KEY_CACHE_MS - 1;
    await expect(key()).resolves.toBe('first');
    now = API_KEY_CACHE_MS + 1;
    await expect(key()).resolves.toBe('second');
  });

  it.each([
    ['a plain string', 'sk-1', 'sk-1'],
    ['a JSON object with apiKey', '{"apiKey": "sk-2"}', 'sk-2'],
    ['a JSON object without apiKey', '{"other": "x"}', undefined],
    ['an empty string', '', undefined],
  ])('reads %s as a secret value', (_name, value, key) => {
    expect(apiKeyFromSecretValue(value)).toBe(key);
  });
});
