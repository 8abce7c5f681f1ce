/**
 * The OpenAI-compatible and MCP bindings under a step's time limit (budget.maxSeconds): the executor abandons the
 * call at the limit and the step fails E_BUDGET_EXHAUSTED; the binding takes the call's abort signal, so the request
 * to a server that never answers is stopped then (the OpenAI request's connection closes, the MCP tool is told to
 * cancel) instead of running on until the binding's own timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpConnections } from '../../../shared/adapters/mcp/connections.ts';
import { mcpCapability } from '../../../shared/adapters/mcp/mcp-capability.ts';
import { openAIAgentCapability } from '../../../shared/adapters/openai/openai-agent-capability.ts';
import type { CapabilityBinding } from '../../../shared/ports/capabilities.ts';
import type { Store } from '../../../shared/ports/store.ts';
import { type CallTimeLimit, createCapabilityCaller } from '../../../shared/services/step/capability-call.ts';
import { aCall, caught } from '../../support/capability-call.ts';
import { startHttpServer, type TestHttpServer } from '../../support/http-server.ts';
import { type RunningMcpServer, startMcpServer, text } from '../../support/mcp-server.ts';

/** What the executor's limit says once the step's seconds are spent (engine/step-seconds.ts's shape). */
const BUDGET_FAILURE = { code: 'E_BUDGET_EXHAUSTED', message: 'step budget exhausted', retryable: false };
/** The step's time left: short, so that the limit passes long before the bindings' own timeouts. */
const LIMIT_MS = 200;
/** The bindings' own timeout: far beyond the test, so only the signal can stop them in time. */
const BINDING_TIMEOUT_MS = 60_000;

/** Resolves once `check` holds, polling; false after `ms`. */
async function eventually(check: () => boolean, ms = 3000): Promise<boolean> {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
  return check();
}

/** Calls `binding` through the executor's caller with LIMIT_MS left of the step's seconds. */
async function callAtTheLimit(binding: CapabilityBinding) {
  const start = Date.now();
  const limit: CallTimeLimit = {
    remainingMs: () => Math.max(0, LIMIT_MS - (Date.now() - start)),
    failure: () => BUDGET_FAILURE,
  };
  const caller = createCapabilityCaller({
    store: {} as Store,
    registry: { binding: () => binding },
    clock: () => new Date(),
  });
  const result = await caller(aCall({ input: {} }), 'none', undefined, limit);
  if (result.refused) throw new Error('the call was refused');
  return result.answer;
}

describe('the OpenAI-compatible agent binding at a step time limit', () => {
  let server: TestHttpServer;
  let closed = 0;
  beforeAll(async () => {
    server = await startHttpServer();
    // A model that never answers: the request is held until the client goes away.
    server.respondWith((_request, response) => {
      response.on('close', () => {
        closed += 1;
      });
    });
  });
  afterAll(async () => {
    await server.close();
  });
  const binding = () =>
    openAIAgentCapability({ baseUrl: `${server.url}/v1`, model: 'slow-model', timeoutMs: BINDING_TIMEOUT_MS });

  it('fails the step E_BUDGET_EXHAUSTED at the limit and stops the request', async () => {
    closed = 0;
    const answer = await callAtTheLimit(binding());

    expect(answer).toMatchObject({ ok: false, failure: BUDGET_FAILURE, evidence: { abandoned: true } });
    expect(await eventually(() => closed === 1)).toBe(true);
  });

  it('rejects at once when the signal is aborted, saying the step stopped it', async () => {
    const controller = new AbortController();
    const pending = caught(binding().invoke(aCall({ input: {}, signal: controller.signal })));
    await eventually(() => server.requests.length > 0);
    controller.abort();

    expect(await pending).toMatchObject({
      name: 'CapabilityError',
      message: expect.stringContaining('stopped by its step'),
    });
  });
});

describe('the MCP tool binding at a step time limit', () => {
  let server: RunningMcpServer;
  let cancelled = 0;
  beforeAll(async () => {
    server = await startMcpServer({
      tools: [
        {
          name: 'never',
          // A tool that never answers on its own: it ends only when the client cancels the call.
          answer: (_args, { signal }) =>
            new Promise((resolve) =>
              signal.addEventListener('abort', () => {
                cancelled += 1;
                resolve(text('{}'));
              }),
            ),
        },
        { name: 'quick', answer: () => text('{"ok":true}') },
      ],
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('fails the step E_BUDGET_EXHAUSTED at the limit, cancels the call, and keeps the connection', async () => {
    cancelled = 0;
    const connections = createMcpConnections();
    const binding = (tool: string) =>
      mcpCapability({
        binding: { kind: 'mcp', transport: 'http', url: server.url, tool, timeoutMs: BINDING_TIMEOUT_MS },
        connections,
      });
    try {
      // Connected first, so that the limit passes while the tool works rather than while the session opens.
      await binding('quick').invoke(aCall({ input: {} }));
      const answer = await callAtTheLimit(binding('never'));

      expect(answer).toMatchObject({ ok: false, failure: BUDGET_FAILURE, evidence: { abandoned: true } });
      expect(server.calls.filter((c) => c.tool === 'never')).toHaveLength(1);
      expect(await eventually(() => cancelled === 1)).toBe(true);
      // The stopped call did not break the connection the server's bindings share: the next call reuses it.
      expect(await binding('quick').invoke(aCall({ input: {} }))).toMatchObject({ output: { ok: true } });
      expect(server.sessions()).toBe(1);
    } finally {
      await connections.close();
    }
  });

  it('rejects at once when the signal is aborted, saying the step stopped it', async () => {
    const connections = createMcpConnections();
    const controller = new AbortController();
    try {
      const pending = caught(
        mcpCapability({
          binding: { kind: 'mcp', transport: 'http', url: server.url, tool: 'never', timeoutMs: BINDING_TIMEOUT_MS },
          connections,
        }).invoke(aCall({ input: {}, signal: controller.signal })),
      );
      await eventually(() => server.calls.some((c) => c.tool === 'never'));
      controller.abort();

      expect(await pending).toMatchObject({
        name: 'CapabilityError',
        message: expect.stringContaining('stopped by its step'),
      });
    } finally {
      await connections.close();
    }
  });
});
