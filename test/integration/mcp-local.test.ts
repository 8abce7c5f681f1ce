/**
 * MCP tools through the embedded stack, as a user wires them for `npm start`: `cairn catalog import --mcp` writes
 * the catalog file and the bindings, CAIRN_CATALOG_FILE and CAIRN_BINDINGS hand them to the stack, and plan steps
 * on those targets call the server through the synthesized step machine.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack } from '../../infra/local/boot.ts';
import { run as catalogCommand } from '../../shared/cli/commands/catalog.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { type LocalStack, plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { json, type RunningMcpServer, startMcpServer, toolError } from '../support/mcp-server.ts';

let server: RunningMcpServer;
let stack: LocalStack;
let dir: string;
let stackClosed = false;

beforeAll(async () => {
  server = await startMcpServer({
    tools: [
      {
        name: 'lookup',
        description: 'Finds a customer by id.',
        inputSchema: { properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
        outputSchema: { properties: { name: { type: 'string' } }, required: ['name'] },
        annotations: { readOnlyHint: true },
        answer: (args) => json({ name: `Customer ${String(args.id)}` }),
      },
      {
        name: 'charge',
        description: 'Charges a customer.',
        inputSchema: { properties: { name: { type: 'string' } }, required: ['name'] },
        outputSchema: { properties: { charged: { type: 'string' } }, required: ['charged'] },
        annotations: { destructiveHint: true },
        answer: (args) => json({ charged: String(args.name) }),
      },
      {
        name: 'refuse',
        description: 'Always refuses.',
        annotations: { readOnlyHint: true },
        answer: () => toolError('account frozen'),
      },
      {
        name: 'wrong_shape',
        description: 'Answers something its contract does not allow.',
        outputSchema: { properties: { name: { type: 'string' } }, required: ['name'] },
        annotations: { readOnlyHint: true },
        answer: () => ({ content: [{ type: 'text', text: '{"nom":"x"}' }] }),
      },
    ],
  });
  dir = await mkdtemp(join(tmpdir(), 'cairn-mcp-local-'));
  const io = { stdout: () => undefined, stderr: () => undefined, env: {}, cwd: dir };
  const imported = await catalogCommand(
    ['import', '--mcp', server.url, '--prefix', 'crm', '--out', 'catalog.json', '--bindings-out', 'bindings.json'],
    io,
  );
  if (imported !== 0) throw new Error(`cairn catalog import exited ${imported}`);
  const settings = settingsFromEnv({
    CAIRN_CATALOG_FILE: join(dir, 'catalog.json'),
    CAIRN_BINDINGS: await readFile(join(dir, 'bindings.json'), 'utf8'),
  });
  stack = await startLocalStack({ settings, backoffMs: 5, demoDelayMs: 0, token: 'test-token' });
}, 120_000);

afterAll(async () => {
  if (!stackClosed) await stack?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('MCP tools on the embedded stack', () => {
  it('runs imported tools in a plan: outputs flow downstream, the side effect carries its idempotency key', async () => {
    const runId = await stack.startRun({
      plan: plan('charge customer 42', [
        step(stack, 'find', 'tool:crm.lookup', { input: { id: '42' } }),
        step(stack, 'bill', 'tool:crm.charge', {
          dependsOn: ['find'],
          input: { name: '{% $outputs.find.name %}' },
          rollbackHint: 'refund the charge',
        }),
      ]),
    });

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('complete');
    expect(stepOf(done, 'find').output).toEqual({ name: 'Customer 42' });
    expect(stepOf(done, 'bill').output).toEqual({ charged: 'Customer 42' });
    const charges = server.calls.filter((call) => call.tool === 'charge');
    expect(charges).toHaveLength(1);
    expect(charges[0]?.meta?.['cairn/idempotency-key']).toEqual(expect.stringContaining(runId));
  });

  it('fails a step whose tool answers isError at once, without retries', async () => {
    const runId = await stack.startRun({
      plan: plan('refused', [step(stack, 'no', 'tool:crm.refuse', { input: {}, maxRetries: 3 })]),
    });

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'no').attempts).toBe(1);
    expect(stepOf(done, 'no').error?.code).toBe('E_TOOL_ERROR');
    expect(stepOf(done, 'no').error?.message).toContain('account frozen');
  });

  it("checks the tool's answer against the imported output contract", async () => {
    const runId = await stack.startRun({
      plan: plan('wrong shape', [step(stack, 'w', 'tool:crm.wrong_shape', { input: {}, maxRetries: 0 })]),
    });

    const done = await waitForRun(stack, runId);

    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'w').error?.code).toBe('E_OUTPUT_SCHEMA');
  });

  it('keeps the demo catalog next to the imported one', () => {
    expect(stack.catalog.has('tool:web.search')).toBe(true);
    expect(stack.catalog.has('tool:crm.lookup')).toBe(true);
  });

  it('ends its MCP session when the stack closes', async () => {
    expect(server.openSessions()).toBe(1);

    await stack.close();
    stackClosed = true;

    expect(server.openSessions()).toBe(0);
  });
});
