import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { describe, expect, it } from 'vitest';
import {
  bindingsFromConfig,
  createRuntimeRegistry,
  defaultBedrockClient,
  defaultLambdaClient,
} from '../../../shared/adapters/bindings.ts';
import { unboundTargets } from '../../../shared/capabilities/registry.ts';
import demoCatalog from '../../../shared/catalog/demo.json' with { type: 'json' };
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import { aCall, caught, codeOf } from '../../support/capability-call.ts';
import { json, startHttpServer } from '../../support/http-server.ts';

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

  it('gives an HTTP binding its redirect policy and reads its answers no further than the output limit', async () => {
    const server = await startHttpServer();
    server.respondWith((request, response) => {
      if (request.url !== '/capability') return json(200, { value: 'x'.repeat(2000) })(request, response);
      response.writeHead(307, { location: '/v2' }).end();
    });
    try {
      const bindings = bindingsFromConfig(
        { 'tool:x': { kind: 'http', url: server.url, redirects: 'same-origin', internal: true } },
        { maxOutputBytes: 1000 },
      );

      const error = await caught(bindings['tool:x']?.invoke(aCall()) ?? Promise.resolve());

      expect(codeOf(error)).toBe('E_OUTPUT_TOO_LARGE');
      expect(server.requests.map((r) => r.url)).toEqual(['/capability', '/v2']);
    } finally {
      await server.close();
    }
  });

  it('gives default clients a single attempt so the step state machine owns retries', async () => {
    expect(await defaultLambdaClient().config.maxAttempts()).toBe(1);
    expect(await defaultBedrockClient().config.maxAttempts()).toBe(1);
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
});
