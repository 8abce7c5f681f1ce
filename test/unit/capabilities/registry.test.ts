import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { describe, expect, it } from 'vitest';
import { builtinTool } from '../../../shared/capabilities/builtin.ts';
import {
  bindingsConfigFromJson,
  bindingsFromConfig,
  createCapabilityRegistry,
  defaultBedrockClient,
  defaultLambdaClient,
  parseBindingsConfig,
  unboundTargets,
} from '../../../shared/capabilities/registry.ts';
import { createRuntimeRegistry, parseBuiltinPacks } from '../../../shared/capabilities/runtime-registry.ts';
import demoCatalog from '../../../shared/catalog/demo.json' with { type: 'json' };
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import { caught } from '../../support/capability-call.ts';

const CONFIG = {
  'tool:ci.build': { kind: 'lambda', functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:build' },
  'tool:ci.test': { kind: 'lambda', functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:test' },
  'tool:web.search': {
    kind: 'http',
    url: 'https://search.example.com/run',
    timeoutMs: 5000,
    headers: { 'x-key': 'k' },
  },
  'agent:report.writer': { kind: 'bedrock', modelId: 'anthropic.claude-3-5-haiku-20241022-v1:0', maxTokens: 2000 },
};

describe('bindingsFromConfig', () => {
  it('builds one binding of the configured kind per target', () => {
    const bindings = bindingsFromConfig(CONFIG, {
      lambdaClient: () => new LambdaClient({ region: 'eu-west-1' }),
      bedrockClient: () => new BedrockRuntimeClient({ region: 'eu-west-1' }),
    });

    expect(Object.fromEntries(Object.entries(bindings).map(([t, b]) => [t, b.kind]))).toEqual({
      'tool:ci.build': 'lambda',
      'tool:ci.test': 'lambda',
      'tool:web.search': 'http',
      'agent:report.writer': 'bedrock',
    });
  });

  it('creates each kind of client once, and none for kinds the configuration does not use', () => {
    const made = { lambda: 0, bedrock: 0 };

    bindingsFromConfig(CONFIG, {
      lambdaClient: () => {
        made.lambda++;
        return new LambdaClient({ region: 'eu-west-1' });
      },
      bedrockClient: () => {
        made.bedrock++;
        return new BedrockRuntimeClient({ region: 'eu-west-1' });
      },
    });
    bindingsFromConfig(
      { 'tool:x': { kind: 'http', url: 'http://127.0.0.1:1/x' } },
      {
        bedrockClient: () => {
          made.bedrock += 100;
          return new BedrockRuntimeClient({ region: 'eu-west-1' });
        },
      },
    );

    expect(made).toEqual({ lambda: 1, bedrock: 1 });
  });

  it('gives default clients a single attempt so the step state machine owns retries', async () => {
    expect(await defaultLambdaClient().config.maxAttempts()).toBe(1);
    expect(await defaultBedrockClient().config.maxAttempts()).toBe(1);
  });

  it.each([
    ['an unknown kind', { 'tool:a': { kind: 'ftp', url: 'ftp://x' } }, '/tool:a/kind'],
    ['a missing url', { 'tool:a': { kind: 'http' } }, '/tool:a/url'],
    ['a non-http url', { 'tool:a': { kind: 'http', url: 'file:///etc/passwd' } }, '/tool:a/url'],
    ['an unknown field', { 'tool:a': { kind: 'lambda', functionArn: 'arn:x', region: 'x' } }, '/tool:a'],
    ['a bad target', { 'web.search': { kind: 'lambda', functionArn: 'arn:x' } }, '/web.search'],
    ['a bound human gate', { 'human:ok': { kind: 'lambda', functionArn: 'arn:x' } }, '/human:ok'],
    ['a bedrock tool', { 'tool:a': { kind: 'bedrock', modelId: 'm' } }, '/tool:a'],
    ['a zero timeout', { 'tool:a': { kind: 'http', url: 'https://x.example', timeoutMs: 0 } }, '/tool:a/timeoutMs'],
  ])('refuses %s with a ValidationError naming the path', async (_label, config, path) => {
    const error = await caught(Promise.resolve().then(() => parseBindingsConfig(config)));

    expect(error.name).toBe('ValidationError');
    expect((error.errors as { path: string }[]).map((e) => e.path)).toContain(path);
  });
});

describe('bindingsConfigFromJson', () => {
  it('reads absent or blank text as no bindings', () => {
    expect(bindingsConfigFromJson(undefined)).toEqual({});
    expect(bindingsConfigFromJson('  ')).toEqual({});
  });

  it('parses and checks JSON text', () => {
    expect(bindingsConfigFromJson(JSON.stringify(CONFIG))).toEqual(CONFIG);
  });

  it('refuses text that is not JSON', () => {
    expect(() => bindingsConfigFromJson('{nope')).toThrow(/CAIRN_BINDINGS is not JSON/);
  });
});

describe('createCapabilityRegistry', () => {
  const a = builtinTool('a', async () => 'a');
  const b = builtinTool('b', async () => 'b');

  it('finds bindings by target and nothing for unknown or inherited names', () => {
    const registry = createCapabilityRegistry({ 'tool:a': a });

    expect(registry.binding('tool:a')).toBe(a);
    expect(registry.binding('tool:b')).toBeUndefined();
    expect(registry.binding('constructor')).toBeUndefined();
    expect(registry.targets()).toEqual(['tool:a']);
  });

  it('lets later sources override earlier ones', () => {
    const registry = createCapabilityRegistry({ 'tool:a': a }, { 'tool:a': b });

    expect(registry.binding('tool:a')).toBe(b);
  });

  it('names catalog targets nobody answers, leaving human gates out', () => {
    const registry = createCapabilityRegistry({ 'tool:a': a });

    expect(unboundTargets(registry, ['tool:a', 'tool:b', 'human:c', 'agent:d'])).toEqual(['tool:b', 'agent:d']);
  });
});

describe('createRuntimeRegistry', () => {
  const catalog = loadCatalog(demoCatalog);

  it('binds every tool and agent of the catalog with the demo pack, and the conformance pack on request', () => {
    const registry = createRuntimeRegistry({ catalog, builtins: ['demo', 'conformance'] });

    expect(unboundTargets(registry, catalog.targets())).toEqual([]);
    expect(registry.binding('tool:conformance.ledger')?.kind).toBe('builtin');
  });

  it('lets configured bindings win over builtins', () => {
    const registry = createRuntimeRegistry({
      catalog,
      builtins: ['demo'],
      bindingsJson: JSON.stringify({ 'tool:web.search': { kind: 'http', url: 'https://search.example.com' } }),
    });

    expect(registry.binding('tool:web.search')?.kind).toBe('http');
    expect(registry.binding('tool:web.fetch')?.kind).toBe('builtin');
  });

  it('parses builtin pack lists', () => {
    expect(parseBuiltinPacks(undefined, ['demo'])).toEqual(['demo']);
    expect(parseBuiltinPacks('demo, conformance', [])).toEqual(['demo', 'conformance']);
    expect(parseBuiltinPacks('none', ['demo'])).toEqual([]);
    expect(() => parseBuiltinPacks('demo,extra', [])).toThrow(/unknown builtin capability pack "extra"/);
  });
});
