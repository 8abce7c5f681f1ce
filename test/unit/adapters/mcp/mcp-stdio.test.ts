import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMcpConnections, type McpConnections } from '../../../../shared/adapters/mcp/connections.ts';
import { mcpCapability } from '../../../../shared/adapters/mcp/mcp-capability.ts';
import type { CapabilityBinding } from '../../../../shared/ports/capabilities.ts';
import { aCall, caught, codeOf } from '../../../support/capability-call.ts';

const FIXTURE = fileURLToPath(new URL('../../../fixtures/mcp/server.ts', import.meta.url));
const SERVER = { command: process.execPath, args: ['--import', 'tsx', FIXTURE, '--faults'] };

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('mcpCapability over stdio (the fixture server as a child process)', () => {
  let connections: McpConnections;
  const binding = (tool: string): CapabilityBinding =>
    mcpCapability({ binding: { kind: 'mcp', transport: 'stdio', ...SERVER, tool }, connections });
  const pidOf = async (): Promise<number> =>
    ((await binding('whoami').invoke(aCall({ input: {} }))).output as { pid: number }).pid;

  beforeAll(() => {
    connections = createMcpConnections();
  });
  afterAll(async () => {
    await connections.close();
  });

  it('makes the structured content the output', async () => {
    const result = await binding('echo').invoke(aCall({ input: { text: 'hello' } }));

    expect(result.output).toEqual({ text: 'hello' });
    expect(result.evidence).toMatchObject({ binding: 'mcp', transport: 'stdio', server: process.execPath });
  });

  it('reads the output from JSON text content when the tool has no structured content', async () => {
    const result = await binding('add').invoke(aCall({ input: { a: 2, b: 40 } }));

    expect(result.output).toEqual({ sum: 42 });
  });

  it('runs every call on one child process', async () => {
    const [first, second] = await Promise.all([pidOf(), pidOf()]);

    expect(first).toBe(second);
    expect(await pidOf()).toBe(first);
  });

  it('fails permanently with E_TOOL_ERROR on an isError result', async () => {
    const error = await caught(binding('fail').invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_TOOL_ERROR');
    expect(error.retryable).toBe(false);
    expect(String(error.message)).toContain('the record is locked');
  });

  it('keeps the retryable flag a failing tool reports in the capability wire error shape', async () => {
    const error = await caught(binding('fail').invoke(aCall({ input: { retryable: true } })));

    expect(codeOf(error)).toBe('E_UPSTREAM_BUSY');
    expect(error.retryable).toBe(true);
  });

  it('fails permanently on a tool the server does not have (McpServer answers isError)', async () => {
    const error = await caught(binding('no_such_tool').invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_TOOL_ERROR');
    expect(error.retryable).toBe(false);
    expect(String(error.message)).toContain('no_such_tool not found');
  });

  it('fails permanently on arguments the tool refuses', async () => {
    const error = await caught(binding('add').invoke(aCall({ input: { a: 'two' } })));

    expect(error.retryable).toBe(false);
    expect(String(error.message)).toMatch(/validation/i);
  });

  it('fails permanently with E_MALFORMED_ANSWER on text that is not JSON', async () => {
    const error = await caught(binding('prose').invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_MALFORMED_ANSWER');
    expect(error.retryable).toBe(false);
  });

  it('fails retryably, with the server stderr, when the server dies mid-call; the next call starts it again', async () => {
    const before = await pidOf();

    const error = await caught(binding('crash').invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_CAPABILITY_UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(String(error.message)).toContain('crashing as asked');
    const after = await pidOf();
    expect(after).not.toBe(before);
    expect(alive(before)).toBe(false);
  });

  it('reconnects when the server was killed between calls', async () => {
    const before = await pidOf();
    process.kill(before, 'SIGKILL');
    await vi.waitFor(() => expect(alive(before)).toBe(false));

    const result = await binding('echo').invoke(aCall({ input: { text: 'again' } }));

    expect(result.output).toEqual({ text: 'again' });
    expect(await pidOf()).not.toBe(before);
  });

  it('fails permanently when the command cannot be started', async () => {
    const missing = mcpCapability({
      binding: { kind: 'mcp', transport: 'stdio', command: 'cairn-no-such-mcp-server', tool: 'x' },
      connections,
    });

    const error = await caught(missing.invoke(aCall({ input: {} })));

    expect(codeOf(error)).toBe('E_CAPABILITY_UNAVAILABLE');
    expect(error.retryable).toBe(false);
    expect(String(error.message)).toContain('cannot be started');
  });

  it('stops the child process when the connections close', async () => {
    const own = createMcpConnections();
    const echo = mcpCapability({
      binding: { kind: 'mcp', transport: 'stdio', ...SERVER, tool: 'whoami' },
      connections: own,
    });
    const { pid } = (await echo.invoke(aCall({ input: {} }))).output as { pid: number };
    expect(alive(pid)).toBe(true);

    await own.close();

    await vi.waitFor(() => expect(alive(pid)).toBe(false));
  });
});
