/**
 * The commands that run without the API print what a model or an MCP server says as text for a terminal, never
 * control: its ESC/OSC sequences, BEL, CR and bidi overrides show escaped, and its JSON stays JSON.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run as catalogCli } from '../../../shared/cli/commands/catalog.ts';
import { run as planCli } from '../../../shared/cli/commands/plan.ts';
import { run as validateCli } from '../../../shared/cli/commands/validate.ts';
import {
  completion,
  type FakeOpenAI,
  type FakeReply,
  startFakeOpenAI,
  status,
} from '../../support/fake-openai-server.ts';
import { json, type RunningMcpServer, startMcpServer } from '../../support/mcp-server.ts';
import { rawControls } from '../../support/raw-controls.ts';
import { demoCatalog } from '../planner/fixtures.ts';
import { capturing } from './served.ts';

/** Sets the window title, rings, rewrites the line from its start and reverses what follows. */
const HOSTILE = 'x\u001b]0;pwned\u0007\u001b[2J\rOK\u202eevil\u009b31m';
const text = (chunks: string[]): string => chunks.join('');

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

async function planWith(reply: FakeReply) {
  const fake: FakeOpenAI = await startFakeOpenAI({ reply: () => reply });
  closing.push(() => fake.close());
  const io = capturing({});
  const code = await planCli(['Summarize', '--model', 'openai', '--model-url', fake.baseUrl, '--model-id', 'm'], io);
  return { code, out: text(io.out), err: text(io.err) };
}

describe('cairn plan', () => {
  it("prints a model's plan as JSON with its controls escaped, parsing to the same text", async () => {
    const kb = demoCatalog().get('tool:kb.search');
    const step = {
      id: 'a',
      title: `Search ${HOSTILE}`,
      target: 'tool:kb.search',
      dependsOn: [],
      input: { query: 'q' },
    };
    const steps = [{ ...step, inputSchema: kb?.inputSchema, outputSchema: kb?.outputSchema }];
    const { code, out } = await planWith(completion({ schemaVersion: 1, revision: 1, objective: 'Summarize', steps }));
    expect(code).toBe(0);
    expect(rawControls(out)).toEqual([]);
    expect(JSON.parse(out).steps[0].title).toBe(`Search ${HOSTILE}`);
  });

  it("prints an endpoint's error message on one line with its controls escaped", async () => {
    const { code, err } = await planWith(status(500, `down\n${HOSTILE}`));
    expect(code).toBe(1);
    expect(rawControls(err)).toEqual([]);
    expect(err).toContain('x\\u001b]0;pwned\\u0007');
    expect(err.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('cairn catalog import', () => {
  let server: RunningMcpServer;

  it("asks about, warns about and reports an MCP server's tools with the controls of their names escaped", async () => {
    server = await startMcpServer({
      tools: [
        { name: `look${HOSTILE}`, description: `Finds ${HOSTILE}`, answer: () => json({}) },
        { name: `again${HOSTILE}`, description: 'Not annotated either', answer: () => json({}) },
      ],
    });
    closing.push(() => server.close());
    const questions: string[] = [];
    const ask = async (question: string) => {
      questions.push(question);
      return 'n';
    };
    const io = { ...capturing({}), ask };
    const tools = [`look${HOSTILE}`, `again${HOSTILE}`, `missing${HOSTILE}`].flatMap((name) => ['--tool', name]);
    const code = await catalogCli(['import', '--mcp', server.url, ...tools], io);
    expect(code).toBe(1);
    expect(questions).toHaveLength(2);
    expect(rawControls(questions.join(''))).toEqual([]);
    expect(rawControls(text(io.err))).toEqual([]);
    expect(text(io.err)).toContain(
      'missingx\\u001b]0;pwned\\u0007\\u001b[2J\\u000dOK\\u202eevil\\u009b31m: the server has no such tool',
    );
    expect(rawControls(text(io.out))).toEqual([]);
    expect(JSON.parse(text(io.out)).capabilities[0].description).toContain(`Finds ${HOSTILE}`);
  });
});

describe('cairn validate', () => {
  it('prints the errors that quote a plan each on one line with their controls escaped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-hostile-'));
    closing.push(() => rm(dir, { recursive: true, force: true }));
    const step = { id: 'a', title: 't', target: 'tool:kb.search', dependsOn: [`b\n${HOSTILE}`], input: {} };
    const file = join(dir, 'plan.json');
    await writeFile(file, JSON.stringify({ schemaVersion: 1, revision: 1, objective: 'o', steps: [step] }));
    const io = capturing({});
    expect(await validateCli([file], io)).toBe(1);
    expect(rawControls(text(io.out))).toEqual([]);
    expect(text(io.out)).toContain('unknown step "b\\u000ax\\u001b]0;pwned\\u0007');
  });
});
