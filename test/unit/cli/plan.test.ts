import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../../shared/cli/commands/plan.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { parseCatalog } from '../../../shared/plan/catalog.ts';
import { validateGenerated } from '../../../shared/plan/validate.ts';
import { completion, startFakeOpenAI, status } from '../../support/fake-openai-server.ts';
import { capability, demoCatalog } from '../planner/fixtures.ts';

interface Captured {
  io: CliIo;
  out: () => string;
  err: () => string;
}

const capture = (cwd = process.cwd()): Captured => {
  let out = '';
  let err = '';
  return {
    io: {
      stdout: (t) => {
        out += t;
      },
      stderr: (t) => {
        err += t;
      },
      env: {},
      cwd,
    },
    out: () => out,
    err: () => err,
  };
};

const planCli = async (argv: string[], cwd?: string) => {
  const c = capture(cwd);
  const code = await run(argv, c.io);
  return { code, out: c.out(), err: c.err() };
};

describe('cairn plan', () => {
  it('prints a valid pretty plan for an objective with the HTN model and the demo catalog', async () => {
    const { code, out, err } = await planCli(['Compile a competitor research report on Acme and Globex']);
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(out).toMatch(/^\{\n {2}"schemaVersion": 1,/);
    const result = validateGenerated(JSON.parse(out), demoCatalog());
    expect(result.valid).toBe(true);
  });

  it('prints the same bytes for the same objective', async () => {
    const first = await planCli(['Triage the incident in checkout-api']);
    const second = await planCli(['Triage', 'the', 'incident', 'in', 'checkout-api']);
    expect(first.out).toBe(second.out);
  });

  it('plans one DIRECT step for --direct-target, with --input', async () => {
    const { code, out } = await planCli([
      'look it up',
      '--direct-target',
      'tool:kb.search',
      '--input',
      '{"query":"vpn"}',
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(out).steps).toMatchObject([{ target: 'tool:kb.search', input: { query: 'vpn' } }]);
  });

  it('applies --max-steps and --max-depth to the plan', async () => {
    const { code, out } = await planCli([
      'Compile a competitor research report on Acme and Globex',
      '--max-steps',
      '2',
    ]);
    expect(code).toBe(0);
    expect(JSON.parse(out).steps.length).toBeLessThanOrEqual(2);
  });

  it('uses a catalog file relative to the working directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-plan-'));
    const writer = { ...capability('agent:report.writer'), inputSchema: { type: 'object' } };
    await writeFile(join(dir, 'catalog.json'), JSON.stringify({ capabilities: [writer] }));
    const { code, out } = await planCli(['anything at all', '--catalog', 'catalog.json'], dir);
    expect(code).toBe(0);
    const catalog = parseCatalog(JSON.stringify({ capabilities: [writer] }));
    expect(validateGenerated(JSON.parse(out), catalog).valid).toBe(true);
  });

  it('exits 1 with the planner message on stderr when no plan can be made', async () => {
    const { code, out, err } = await planCli(['look', '--direct-target', 'tool:nope']);
    expect({ code, out }).toEqual({ code: 1, out: '' });
    expect(err).toContain('E_UNKNOWN_TARGET');
  });

  it('exits 1 when the catalog has no method for the objective', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-plan-'));
    await writeFile(join(dir, 'c.json'), JSON.stringify({ capabilities: [capability('tool:other')] }));
    const { code, err } = await planCli(['anything', '--catalog', 'c.json'], dir);
    expect(code).toBe(1);
    expect(err).toContain('E_NO_METHOD');
  });

  const usage: [string, string[]][] = [
    ['no objective', []],
    ['an unknown flag', ['x', '--fast']],
    ['a bad mode', ['x', '--mode', 'auto']],
    ['DIRECT without a target', ['x', '--mode', 'DIRECT']],
    ['DECOMPOSE with a target', ['x', '--mode', 'DECOMPOSE', '--direct-target', 'tool:kb.search']],
    ['a bad limit', ['x', '--max-steps', '0']],
    ['bedrock without a model id', ['x', '--model', 'bedrock']],
    ['openai without a model id', ['x', '--model', 'openai', '--model-url', 'http://localhost:11434/v1']],
    ['openai without a URL', ['x', '--model', 'openai', '--model-id', 'llama3.1']],
    ['an unknown model', ['x', '--model', 'gpt']],
    ['input that is not JSON', ['x', '--direct-target', 'tool:kb.search', '--input', '{']],
    ['an unreadable catalog', ['x', '--catalog', 'does-not-exist.json']],
  ];

  it.each(usage)('exits 2 on %s', async (_name, argv) => {
    const { code, out, err } = await planCli(argv);
    expect({ code, out }).toEqual({ code: 2, out: '' });
    expect(err.length).toBeGreaterThan(0);
  });

  it('exits 2 on a catalog that does not load', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-plan-'));
    await writeFile(join(dir, 'bad.json'), '{"capabilities": [{"target": "nope"}]}');
    const { code, err } = await planCli(['x', '--catalog', 'bad.json'], dir);
    expect(code).toBe(2);
    expect(err).toContain('cannot use the catalog');
  });

  it('plans with a model behind an OpenAI-compatible endpoint, sending CAIRN_MODEL_API_KEY', async () => {
    const objective = 'Summarize the incidents';
    const candidate = {
      schemaVersion: 1,
      revision: 1,
      objective,
      steps: [{ id: 'a', title: 'Search', target: 'tool:kb.search', dependsOn: [], input: { query: 'incidents' } }],
    };
    const kb = demoCatalog().get('tool:kb.search');
    const steps = [{ ...candidate.steps[0], inputSchema: kb?.inputSchema, outputSchema: kb?.outputSchema }];
    const fake = await startFakeOpenAI({ reply: () => completion({ ...candidate, steps }) });
    try {
      const c = capture();
      const code = await run([objective, '--model', 'openai', '--model-url', fake.baseUrl, '--model-id', 'llama3.1'], {
        ...c.io,
        env: { CAIRN_MODEL_API_KEY: 'sk-cli' },
      });
      expect({ code, err: c.err() }).toEqual({ code: 0, err: '' });
      expect(JSON.parse(c.out()).steps.map((s: { id: string }) => s.id)).toEqual(['a']);
      expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-cli');
      expect(fake.requests[0]?.body.model).toBe('llama3.1');
    } finally {
      await fake.close();
    }
  });

  it('exits 1 saying the failure is transient when the endpoint throttles', async () => {
    const fake = await startFakeOpenAI({ reply: () => status(429) });
    try {
      const { code, err } = await planCli(['x', '--model', 'openai', '--model-url', fake.baseUrl, '--model-id', 'm']);
      expect(code).toBe(1);
      expect(err).toContain('(transient: try again)');
    } finally {
      await fake.close();
    }
  });

  it('prints its usage with --help', async () => {
    const { code, out } = await planCli(['--help']);
    expect(code).toBe(0);
    expect(out).toContain('--direct-target');
  });
});
