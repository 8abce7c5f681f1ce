import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindingsFromConfig } from '../../../shared/adapters/bindings.ts';
import { bindingsConfigFromJson } from '../../../shared/capabilities/registry.ts';
import { run, splitCommandLine } from '../../../shared/cli/commands/catalog.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { main } from '../../../shared/cli/main.ts';
import { parseCatalog } from '../../../shared/plan/catalog.ts';
import { aCall } from '../../support/capability-call.ts';
import { refusedUrl } from '../../support/http-server.ts';
import { json, type RunningMcpServer, startMcpServer } from '../../support/mcp-server.ts';

const FIXTURE = fileURLToPath(new URL('../../fixtures/mcp/server.ts', import.meta.url));
const FIXTURE_COMMAND = `"${process.execPath}" --import tsx "${FIXTURE}"`;

async function cairnCatalog(args: string[], options: { cwd: string; answers?: string[] }) {
  const out: string[] = [];
  const err: string[] = [];
  const questions: string[] = [];
  const answers = options.answers;
  const io: CliIo = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    env: {},
    cwd: options.cwd,
    ...(answers === undefined
      ? {}
      : {
          ask: async (question: string) => {
            questions.push(question);
            return answers.shift() ?? '';
          },
        }),
  };
  const code = await run(args, io);
  return { code, stdout: out.join(''), stderr: err.join(''), questions };
}

const sideEffects = (catalogText: string) =>
  Object.fromEntries(
    parseCatalog(catalogText)
      .capabilities()
      .map((c) => [c.target, c.sideEffect]),
  );

describe('cairn catalog import --mcp (stdio fixture server)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-catalog-import-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a valid catalog with side effects from the annotations, and bindings that call the tools', async () => {
    const result = await cairnCatalog(
      ['import', '--mcp', FIXTURE_COMMAND, '--out', 'catalog.json', '--bindings-out', 'bindings.json', '--yes'],
      { cwd: dir },
    );

    expect(result.code).toBe(0);
    const catalogText = await readFile(join(dir, 'catalog.json'), 'utf8');
    expect(sideEffects(catalogText)).toEqual({
      'tool:cairn-fixture.echo': 'none',
      'tool:cairn-fixture.add': 'mutating',
      'tool:cairn-fixture.whoami': 'none',
      'tool:cairn-fixture.remember': 'idempotent',
      'tool:cairn-fixture.forget': 'mutating',
    });
    expect(result.stderr).toContain('warning: add has no readOnlyHint or destructiveHint; imported as mutating');
    const catalog = parseCatalog(catalogText);
    const echo = catalog.get('tool:cairn-fixture.echo');
    expect(echo?.inputSchema).not.toHaveProperty('$schema'); // the server's draft-07 dialect is dropped
    expect(echo?.inputSchema).toMatchObject({ type: 'object', required: ['text'] });
    expect(echo?.outputSchema).toMatchObject({ properties: { text: { type: 'string' } } });
    expect(catalog.get('tool:cairn-fixture.add')?.outputSchema).toEqual({});

    const config = bindingsConfigFromJson(await readFile(join(dir, 'bindings.json'), 'utf8'));
    expect(config['tool:cairn-fixture.echo']).toEqual({
      kind: 'mcp',
      transport: 'stdio',
      command: process.execPath,
      args: ['--import', 'tsx', FIXTURE],
      tool: 'echo',
    });
    const bindings = bindingsFromConfig(config);
    try {
      const capability = echo ?? catalog.capabilities()[0];
      const answer = await bindings['tool:cairn-fixture.echo']?.invoke(
        aCall({ target: 'tool:cairn-fixture.echo', capability, input: { text: 'round trip' } }),
      );
      expect(catalog.validateOutput('tool:cairn-fixture.echo', answer?.output)).toEqual({ ok: true });
    } finally {
      await bindings['tool:cairn-fixture.echo']?.close?.();
    }
  });

  it('asks on a terminal when the annotations say nothing, and only then', async () => {
    const result = await cairnCatalog(['import', '--mcp', FIXTURE_COMMAND, '--prefix', 'notes', '--tool', 'add'], {
      cwd: dir,
      answers: ['maybe', 'n'],
    });

    expect(result.code).toBe(0);
    expect(result.questions).toHaveLength(2); // an answer that is not yes or no is asked again
    expect(result.questions[0]).toContain('"add"');
    expect(sideEffects(result.stdout)).toEqual({ 'tool:notes.add': 'none' });
    expect(result.stderr).toMatch(/^export CAIRN_BINDINGS='\{"tool:notes\.add":/m);
  });
});

describe('cairn catalog import --mcp (Streamable HTTP server)', () => {
  let server: RunningMcpServer;
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-catalog-import-'));
    server = await startMcpServer({
      tools: [
        {
          name: 'lookup',
          description: 'Finds a customer.',
          inputSchema: { properties: { id: { type: 'string' } }, required: ['id'] },
          outputSchema: { properties: { name: { type: 'string' } } },
          annotations: { readOnlyHint: true },
          answer: () => json({ name: 'Acme' }),
        },
        {
          name: 'send mail!',
          annotations: { readOnlyHint: false },
          answer: () => json({ sent: true }),
        },
        {
          name: 'remote',
          inputSchema: { properties: { x: { $ref: 'https://example.com/schema.json' } } },
          annotations: { readOnlyHint: true },
          answer: () => json({}),
        },
      ],
    });
  });
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the catalog, leaves out a tool the catalog cannot hold, and says so with exit 1', async () => {
    const result = await cairnCatalog(['import', '--mcp', server.url, '--header', 'Authorization: Bearer t'], {
      cwd: dir,
    });

    expect(result.code).toBe(1);
    const catalog = parseCatalog(result.stdout);
    expect(catalog.targets()).toEqual(['tool:cairn-test-mcp.lookup', 'tool:cairn-test-mcp.send-mail-']);
    expect(sideEffects(result.stdout)['tool:cairn-test-mcp.send-mail-']).toBe('mutating');
    expect(catalog.get('tool:cairn-test-mcp.lookup')?.description).toBe('Finds a customer.');
    expect(result.stderr).toMatch(/remote: left out, the catalog cannot hold it: .*remote \$ref/);
    const line = result.stderr.split('\n').find((l) => l.startsWith('export CAIRN_BINDINGS='));
    const bindings = bindingsConfigFromJson(line?.slice("export CAIRN_BINDINGS='".length, -1));
    expect(bindings['tool:cairn-test-mcp.send-mail-']).toEqual({
      kind: 'mcp',
      transport: 'http',
      url: server.url,
      headers: { Authorization: 'Bearer t' },
      tool: 'send mail!',
    });
  });

  it('adds to an existing catalog and bindings file: same targets replaced, others kept', async () => {
    const other = {
      target: 'tool:other.thing',
      description: 'Something else.',
      inputSchema: { type: 'object' },
      outputSchema: {},
      sideEffect: 'none',
    };
    const stale = { ...other, target: 'tool:crm.lookup', description: 'old' };
    await writeFile(join(dir, 'catalog.json'), JSON.stringify({ capabilities: [stale, other] }));
    await writeFile(
      join(dir, 'bindings.json'),
      JSON.stringify({ 'tool:other.thing': { kind: 'http', url: 'https://x.example' } }),
    );

    const result = await cairnCatalog(
      [
        'import',
        '--mcp',
        server.url,
        '--prefix',
        'crm',
        '--tool',
        'lookup',
        '--out',
        'catalog.json',
        '--bindings-out',
        'bindings.json',
      ],
      { cwd: dir },
    );

    expect(result.code).toBe(0);
    const catalog = parseCatalog(await readFile(join(dir, 'catalog.json'), 'utf8'));
    expect(catalog.targets()).toEqual(['tool:crm.lookup', 'tool:other.thing']);
    expect(catalog.get('tool:crm.lookup')?.description).toBe('Finds a customer.');
    const bindings = JSON.parse(await readFile(join(dir, 'bindings.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(bindings).sort()).toEqual(['tool:crm.lookup', 'tool:other.thing']);
  });

  it('prints the export line on stdout when the catalog goes to a file', async () => {
    const result = await cairnCatalog(['import', '--mcp', server.url, '--tool', 'lookup', '--out', 'only.json'], {
      cwd: dir,
    });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^export CAIRN_BINDINGS='\{"tool:cairn-test-mcp\.lookup":\{"kind":"mcp"/);
  });

  it('exits 1 naming the server when it cannot be reached', async () => {
    const url = await refusedUrl();

    const result = await cairnCatalog(['import', '--mcp', url], { cwd: dir });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot list the tools of MCP server ${url}`);
  });

  it('is reachable as `cairn catalog` and rejects bad usage with exit 2', async () => {
    const err: string[] = [];
    const io: CliIo = { stdout: () => undefined, stderr: (t) => err.push(t), env: {}, cwd: dir };

    expect(await main(['catalog', 'import'], io)).toBe(2);
    expect(err.join('')).toContain('missing --mcp');
    expect(await main(['catalog', 'import', '--mcp', server.url, '--env', 'A=b'], io)).toBe(2);
  });
});

describe('splitCommandLine', () => {
  it.each([
    ['node server.js', ['node', 'server.js']],
    ['  npx -y  @scope/pkg ', ['npx', '-y', '@scope/pkg']],
    [`"/opt/my tools/node" --flag='a b' c\\ d`, ['/opt/my tools/node', '--flag=a b', 'c d']],
    [`run "" 'x"y'`, ['run', '', 'x"y']],
  ])('splits %s', (line, words) => {
    expect(splitCommandLine(line)).toEqual(words);
  });

  it('refuses an unclosed quote', () => {
    expect(() => splitCommandLine('node "server.js')).toThrow(/unclosed/);
  });
});
