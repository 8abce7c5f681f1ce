import { describe, expect, it } from 'vitest';
import { builtinTool } from '../../../shared/capabilities/builtin.ts';
import {
  bindingsConfigFromJson,
  createCapabilityRegistry,
  parseBindingsConfig,
  unboundTargets,
} from '../../../shared/capabilities/registry.ts';
import { parseBuiltinPacks } from '../../../shared/capabilities/runtime-registry.ts';
import { caught } from '../../support/capability-call.ts';

const CONFIG = {
  'tool:ci.build': { kind: 'lambda', functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:build' },
  'tool:ci.test': { kind: 'lambda', functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:test' },
  'tool:web.search': {
    kind: 'http',
    url: 'https://search.example.com/run',
    timeoutMs: 5000,
    headers: { 'x-key': 'k' },
    redirects: 'same-origin',
    internal: true,
  },
  'agent:report.writer': { kind: 'bedrock', modelId: 'anthropic.claude-3-5-haiku-20241022-v1:0', maxTokens: 2000 },
};

describe('parseBindingsConfig', () => {
  it.each([
    ['an unknown kind', { 'tool:a': { kind: 'ftp', url: 'ftp://x' } }, '/tool:a/kind'],
    ['a missing url', { 'tool:a': { kind: 'http' } }, '/tool:a/url'],
    ['a non-http url', { 'tool:a': { kind: 'http', url: 'file:///etc/passwd' } }, '/tool:a/url'],
    ['an unknown field', { 'tool:a': { kind: 'lambda', functionArn: 'arn:x', region: 'x' } }, '/tool:a'],
    ['a bad target', { 'web.search': { kind: 'lambda', functionArn: 'arn:x' } }, '/web.search'],
    ['a bound human gate', { 'human:ok': { kind: 'lambda', functionArn: 'arn:x' } }, '/human:ok'],
    ['a bedrock tool', { 'tool:a': { kind: 'bedrock', modelId: 'm' } }, '/tool:a'],
    ['a zero timeout', { 'tool:a': { kind: 'http', url: 'https://x.example', timeoutMs: 0 } }, '/tool:a/timeoutMs'],
    [
      'an internal mark that is not a boolean',
      { 'tool:a': { kind: 'http', url: 'https://x.example', internal: 'yes' } },
      '/tool:a/internal',
    ],
    [
      'an unknown redirect policy',
      { 'tool:a': { kind: 'http', url: 'https://x.example', redirects: 'any' } },
      '/tool:a/redirects',
    ],
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

describe('parseBuiltinPacks', () => {
  it('parses builtin pack lists', () => {
    expect(parseBuiltinPacks(undefined, ['demo'])).toEqual(['demo']);
    expect(parseBuiltinPacks('demo, conformance', [])).toEqual(['demo', 'conformance']);
    expect(parseBuiltinPacks('none', ['demo'])).toEqual([]);
    expect(() => parseBuiltinPacks('demo,extra', [])).toThrow(/unknown builtin capability pack "extra"/);
  });
});
