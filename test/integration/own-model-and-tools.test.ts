/**
 * "Use your own model and tools", end to end through `npm start` as a user runs it: a child process started with
 * `--model-url/--model` (a fake OpenAI-compatible server stands in for Ollama), CAIRN_CATALOG_FILE and
 * CAIRN_BINDINGS written by `cairn catalog import --mcp` plus one agent binding on the same model. An objective is
 * planned by the model, its agent step is answered by the model, and its tool step calls the MCP server's tool with
 * the agent's output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run as catalogCommand } from '../../shared/cli/commands/catalog.ts';
import { completion, type FakeOpenAI, formatName, startFakeOpenAI } from '../support/fake-openai-server.ts';
import { json, type RunningMcpServer, startMcpServer } from '../support/mcp-server.ts';

const TOKEN = 'e2e-token';
const WRITER = 'agent:notes.writer';
const SHOUT = 'tool:crm.shout';
const textContract = {
  type: 'object',
  properties: { text: { type: 'string' } },
  required: ['text'],
  additionalProperties: false,
};
const topicContract = {
  type: 'object',
  properties: { topic: { type: 'string' } },
  required: ['topic'],
  additionalProperties: false,
};

let fake: FakeOpenAI;
let mcp: RunningMcpServer;
let dir: string;
let child: ChildProcess | undefined;
let output = '';
let baseUrl = '';

/** The plan the fake model proposes: the agent writes, the MCP tool shouts what it wrote. */
function proposedPlan(objective: string, shoutContract: { inputSchema: unknown; outputSchema: unknown }) {
  return {
    schemaVersion: 1,
    revision: 1,
    objective,
    steps: [
      {
        id: 'write',
        title: 'Write a note',
        target: WRITER,
        dependsOn: [],
        input: { topic: 'cairn' },
        inputSchema: topicContract,
        outputSchema: textContract,
      },
      {
        id: 'shout',
        title: 'Shout the note',
        target: SHOUT,
        dependsOn: ['write'],
        input: { text: '{% $outputs.write.text %}' },
        ...shoutContract,
      },
    ],
  };
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json().catch(() => null) };
}

beforeAll(async () => {
  mcp = await startMcpServer({
    tools: [
      {
        name: 'shout',
        description: 'Upper-cases a text.',
        inputSchema: { properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
        outputSchema: { properties: { text: { type: 'string' } }, required: ['text'] },
        annotations: { readOnlyHint: true },
        answer: (args) => json({ text: String(args.text).toUpperCase() }),
      },
    ],
  });
  dir = await mkdtemp(join(tmpdir(), 'cairn-own-model-'));
  const io = { stdout: () => undefined, stderr: () => undefined, env: {}, cwd: dir };
  const imported = await catalogCommand(
    ['import', '--mcp', mcp.url, '--prefix', 'crm', '--out', 'catalog.json', '--bindings-out', 'bindings.json'],
    io,
  );
  expect(imported).toBe(0);
  const catalog = JSON.parse(await readFile(join(dir, 'catalog.json'), 'utf8')) as {
    capabilities: { target: string; inputSchema: unknown; outputSchema: unknown }[];
  };
  const shout = catalog.capabilities.find((c) => c.target === SHOUT);
  if (!shout) throw new Error(`the import wrote no ${SHOUT}: ${JSON.stringify(catalog)}`);
  fake = await startFakeOpenAI({
    reply: (request) => {
      if (formatName(request) === 'submit_plan') {
        const objective = /Objective:\n(.*)/.exec(request.body.messages[1]?.content ?? '')?.[1] ?? '';
        return completion(
          proposedPlan(objective, { inputSchema: shout.inputSchema, outputSchema: shout.outputSchema }),
        );
      }
      return completion({ output: { text: 'notes by a local model' }, confidence: 0.9 });
    },
  });
  catalog.capabilities.push({
    target: WRITER,
    description: 'Writes a short note about a topic.',
    inputSchema: topicContract,
    outputSchema: textContract,
    sideEffect: 'none',
  } as (typeof catalog.capabilities)[number]);
  await writeFile(join(dir, 'catalog.json'), JSON.stringify(catalog));
  const bindings = JSON.parse(await readFile(join(dir, 'bindings.json'), 'utf8')) as Record<string, unknown>;
  bindings[WRITER] = { kind: 'openai', baseUrl: fake.baseUrl, model: 'local-model' };

  child = spawn(
    process.execPath,
    [resolve('bin/start.js'), '--no-demo', '--port', '0', '--model-url', fake.baseUrl, '--model', 'local-model'],
    {
      cwd: dir,
      env: {
        ...process.env,
        CAIRN_API_TOKEN: TOKEN,
        CAIRN_CATALOG_FILE: join(dir, 'catalog.json'),
        CAIRN_BINDINGS: JSON.stringify(bindings),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const deadline = Date.now() + 150_000;
  while (!baseUrl) {
    const found = /cairn: API\s+(http:\/\/\S+)/.exec(output)?.[1];
    if (found) baseUrl = found;
    else if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${output}`);
    else if (Date.now() > deadline) throw new Error(`npm start did not print its API URL:\n${output}`);
    else await new Promise((r) => setTimeout(r, 200));
  }
}, 200_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  await fake?.close();
  await mcp?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm start with an OpenAI-compatible model and an MCP tool', () => {
  it('plans an objective with the model and runs its agent step on the model and its tool step on MCP', async () => {
    const created = await api('POST', '/runs', { objective: 'Write a note about cairn and shout it' });
    expect(created.status, JSON.stringify(created.json)).toBe(202);
    const { runId } = created.json as { runId: string };
    let run: { status: string; steps: { id: string; status: string; output: unknown }[] } | undefined;
    for (let i = 0; i < 600; i++) {
      run = (await api('GET', `/runs/${runId}`)).json as typeof run;
      if (run && ['complete', 'failed', 'cancelled', 'paused'].includes(run.status)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(run?.status, `${JSON.stringify(run)}\n${output.slice(-2000)}`).toBe('complete');
    expect(run?.steps.find((s) => s.id === 'write')?.output).toEqual({ text: 'notes by a local model' });
    expect(run?.steps.find((s) => s.id === 'shout')?.output).toEqual({ text: 'NOTES BY A LOCAL MODEL' });
    expect(fake.requests.map(formatName)).toEqual(['submit_plan', 'submit_result']);
    expect(mcp.calls.map((c) => c.tool)).toEqual(['shout']);
    expect(output).toContain('planner: model local-model');
  }, 120_000);
});
