import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bindingsFromConfig } from '../../../../shared/adapters/bindings.ts';
import { createMcpConnections, type McpConnections } from '../../../../shared/adapters/mcp/connections.ts';
import { IDEMPOTENCY_META_KEY, mcpCapability } from '../../../../shared/adapters/mcp/mcp-capability.ts';
import type { McpBindingConfig } from '../../../../shared/capabilities/mcp-binding-config.ts';
import { parseBindingsConfig } from '../../../../shared/capabilities/registry.ts';
import type { CapabilityBinding } from '../../../../shared/ports/capabilities.ts';
import { describeBindingBehaviour, scriptedAnswer } from '../../../support/capability-binding-behaviour.ts';
import { aCall, caught, codeOf } from '../../../support/capability-call.ts';
import { json as httpJson, refusedUrl, startHttpServer } from '../../../support/http-server.ts';
import {
  type FixtureTool,
  json,
  type RunningMcpServer,
  startMcpServer,
  text,
  toolError,
} from '../../../support/mcp-server.ts';

const TOOLS: FixtureTool[] = [
  { name: 'structured', answer: (args) => json({ got: args }) },
  { name: 'texty', answer: (args) => text(JSON.stringify({ sum: Number(args.a) + Number(args.b) })) },
  {
    name: 'both',
    answer: () => ({ structuredContent: { from: 'structured' }, content: [{ type: 'text', text: '{}' }] }),
  },
  { name: 'prose', answer: () => text('not JSON at all') },
  { name: 'empty', answer: () => ({ content: [] }) },
  { name: 'locked', answer: () => toolError('the record is locked') },
  {
    name: 'busy',
    answer: () => toolError(JSON.stringify({ error: { code: 'E_UPSTREAM_BUSY', message: 'busy', retryable: true } })),
  },
  { name: 'explodes', answer: () => Promise.reject(new Error('kaboom')) },
  { name: 'stalls', answer: () => new Promise(() => undefined) },
];

describeBindingBehaviour('mcp (Streamable HTTP server from the SDK)', async () => {
  const server = await startMcpServer({
    tools: [
      {
        name: 'scripted',
        answer: (args) => {
          const answer = scriptedAnswer(args);
          if ('output' in answer) return json(answer.output as Record<string, unknown>);
          return toolError(JSON.stringify({ error: { message: 'asked to fail', retryable: answer.fail.retryable } }));
        },
      },
    ],
  });
  const connections = createMcpConnections();
  return {
    kind: 'mcp',
    binding: mcpCapability({
      binding: { kind: 'mcp', transport: 'http', url: server.url, tool: 'scripted' },
      connections,
    }),
    async stop() {
      await connections.close();
      await server.close();
    },
  };
});

describe('mcpCapability over Streamable HTTP', () => {
  let server: RunningMcpServer;
  let connections: McpConnections;
  const binding = (tool: string, extra: Partial<McpBindingConfig> = {}): CapabilityBinding =>
    mcpCapability({
      binding: { kind: 'mcp', transport: 'http', url: server.url, tool, ...extra } as McpBindingConfig,
      connections,
    });

  beforeAll(async () => {
    server = await startMcpServer({ tools: TOOLS });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    connections = createMcpConnections();
    server.calls.length = 0;
  });
  afterEach(async () => {
    await connections.close();
  });

  it('makes the structured content the output, with the arguments and idempotency key sent', async () => {
    const result = await binding('structured').invoke(aCall({ input: { q: 'acme' } }));

    expect(result.output).toEqual({ got: { q: 'acme' } });
    expect(result.evidence).toEqual({ binding: 'mcp', transport: 'http', server: server.url, tool: 'structured' });
    expect(server.calls).toEqual([
      expect.objectContaining({
        tool: 'structured',
        arguments: { q: 'acme' },
        meta: { [IDEMPOTENCY_META_KEY]: 'run-1#step-1#1' },
      }),
    ]);
  });

  it('reads the output from JSON text content when there is no structured content', async () => {
    const result = await binding('texty').invoke(aCall({ input: { a: 2, b: 3 } }));

    expect(result.output).toEqual({ sum: 5 });
  });

  it('prefers structured content over the text', async () => {
    const result = await binding('both').invoke(aCall({ input: {} }));

    expect(result.output).toEqual({ from: 'structured' });
  });

  it.each([
    ['text that is not JSON', 'prose'],
    ['no content at all', 'empty'],
  ])('fails permanently with E_MALFORMED_ANSWER on %s', async (_label, tool) => {
    const error = await caught(binding(tool).invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_MALFORMED_ANSWER');
    expect(error.retryable).toBe(false);
  });

  it('fails permanently with E_TOOL_ERROR on an isError result, quoting the text', async () => {
    const error = await caught(binding('locked').invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_TOOL_ERROR');
    expect(error.retryable).toBe(false);
    expect(String(error.message)).toContain('the record is locked');
  });

  it('keeps the code and retryable flag of an isError result in the capability wire error shape', async () => {
    const error = await caught(binding('busy').invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_UPSTREAM_BUSY');
    expect(error.retryable).toBe(true);
  });

  it('fails permanently with E_CAPABILITY_REJECTED when the server does not know the tool (InvalidParams)', async () => {
    const error = await caught(binding('no-such-tool').invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_CAPABILITY_REJECTED');
    expect(error.retryable).toBe(false);
    expect(String(error.message)).toContain('Unknown tool: no-such-tool');
  });

  it('fails retryably with E_CAPABILITY_UNAVAILABLE when the server throws (InternalError)', async () => {
    const error = await caught(binding('explodes').invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_CAPABILITY_UNAVAILABLE');
    expect(error.retryable).toBe(true);
  });

  it('refuses an input that is not an object before calling (E_INPUT_SCHEMA)', async () => {
    const error = await caught(binding('structured').invoke(aCall({ input: [1, 2] })));

    expect(codeOf(error)).toBe('E_INPUT_SCHEMA');
    expect(server.calls).toHaveLength(0);
  });

  it('shares one session between calls and bindings of the same server', async () => {
    const sessionsBefore = server.sessions();

    await Promise.all([
      binding('structured').invoke(aCall({ input: { n: 1 } })),
      binding('texty').invoke(aCall({ input: { a: 1, b: 1 } })),
      binding('structured').invoke(aCall({ input: { n: 2 } })),
    ]);
    await binding('structured').invoke(aCall({ input: { n: 3 } }));

    expect(server.sessions() - sessionsBefore).toBe(1);
    expect(new Set(server.calls.map((call) => call.sessionId)).size).toBe(1);
  });

  it('starts a new session and sends the call once when the server has forgotten the old one (HTTP 404)', async () => {
    await binding('structured').invoke(aCall({ input: { n: 1 } }));
    await server.forgetSessions();

    const result = await binding('structured').invoke(aCall({ input: { n: 2 } }));

    expect(result.output).toEqual({ got: { n: 2 } });
    expect(server.calls.map((call) => call.arguments)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(new Set(server.calls.map((call) => call.sessionId)).size).toBe(2);
  });

  it('fails retryably with E_CAPABILITY_TIMEOUT when the tool does not answer within timeoutMs, and keeps the session', async () => {
    const sessionsBefore = server.sessions();

    const error = await caught(binding('stalls', { timeoutMs: 300 }).invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_CAPABILITY_TIMEOUT');
    expect(error.retryable).toBe(true);
    await binding('structured').invoke(aCall({ input: {} }));
    expect(server.sessions() - sessionsBefore).toBe(1);
  });

  it.each([
    [401, 'E_CAPABILITY_REJECTED', false],
    [404, 'E_CAPABILITY_REJECTED', false],
    [429, 'E_CAPABILITY_THROTTLED', true],
    [503, 'E_CAPABILITY_UNAVAILABLE', true],
  ])('classifies an endpoint that answers HTTP %i as %s (retryable %s)', async (status, code, retryable) => {
    const endpoint = await startHttpServer();
    endpoint.respondWith(httpJson(status, { error: 'no' }));
    try {
      const failing = mcpCapability({
        binding: { kind: 'mcp', transport: 'http', url: endpoint.url, tool: 'structured' },
        connections,
      });

      const error = await caught(failing.invoke(aCall({ input: {} })));

      expect(codeOf(error)).toBe(code);
      expect(error.retryable).toBe(retryable);
      expect(endpoint.requests).toHaveLength(1); // a 404 on a fresh connection is not a lost session: no retry
    } finally {
      await endpoint.close();
    }
  });

  it('fails retryably when nothing listens, and no call is left open', async () => {
    const url = await refusedUrl();
    const down = mcpCapability({ binding: { kind: 'mcp', transport: 'http', url, tool: 'structured' }, connections });

    const error = await caught(down.invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_CAPABILITY_UNAVAILABLE');
    expect(error.retryable).toBe(true);
  });

  it('refuses calls once closed (the runtime stops)', async () => {
    const open = binding('structured');
    await open.invoke(aCall({ input: {} }));
    await open.close?.();

    const error = await caught(open.invoke(aCall({ input: {} })));

    expect(error.retryable).toBe(true);
    expect(String(error.message)).toContain('stopping');
  });
});

describe('mcp bindings in CAIRN_BINDINGS', () => {
  it('accepts the stdio and http forms', () => {
    const config = parseBindingsConfig({
      'tool:a': { kind: 'mcp', transport: 'stdio', command: 'node', args: ['s.js'], env: { K: 'v' }, tool: 'a' },
      'tool:b': {
        kind: 'mcp',
        transport: 'http',
        url: 'https://x.example/mcp',
        headers: { authorization: 'B' },
        tool: 'b',
      },
    });

    expect(Object.keys(config)).toEqual(['tool:a', 'tool:b']);
  });

  it.each([
    ['no tool', { kind: 'mcp', transport: 'stdio', command: 'node' }],
    ['an unknown transport', { kind: 'mcp', transport: 'sse', url: 'https://x.example', tool: 't' }],
    ['a url on stdio', { kind: 'mcp', transport: 'stdio', url: 'https://x.example', tool: 't' }],
    ['a non-http url', { kind: 'mcp', transport: 'http', url: 'ftp://x.example', tool: 't' }],
  ])('rejects %s', (_label, binding) => {
    expect(() => parseBindingsConfig({ 'tool:x': binding })).toThrow(/invalid capability bindings/);
  });

  it('builds mcp bindings that share one set of connections and close together', async () => {
    const server = await startMcpServer({ tools: TOOLS });
    try {
      const bindings = bindingsFromConfig({
        'tool:one': { kind: 'mcp', transport: 'http', url: server.url, tool: 'structured' },
        'tool:two': { kind: 'mcp', transport: 'http', url: server.url, tool: 'texty' },
      });
      await bindings['tool:one']?.invoke(aCall({ input: {} }));
      await bindings['tool:two']?.invoke(aCall({ input: { a: 1, b: 2 } }));

      expect(server.sessions()).toBe(1);
      await bindings['tool:one']?.close?.();
      const error = await caught(bindings['tool:two']?.invoke(aCall({ input: {} })) ?? Promise.resolve());
      expect(String(error.message)).toContain('stopping');
    } finally {
      await server.close();
    }
  });
});
