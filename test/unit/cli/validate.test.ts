import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CATALOG_PATH, run } from '../../../shared/cli/commands/validate.ts';
import type { CliIo } from '../../../shared/cli/io.ts';
import { fixturePath, plan, step } from '../plan/plan-testkit.ts';

const projectRoot = fileURLToPath(new URL('../../..', import.meta.url));

function fakeIo(cwd = projectRoot) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env: {}, cwd };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}

async function cairnValidate(args: string[], cwd?: string) {
  const fake = fakeIo(cwd);
  const code = await run(args, fake.io);
  return { code, stdout: fake.stdout(), stderr: fake.stderr() };
}

const CATALOG = ['--catalog', fixturePath('catalog.json')];
let dir = '';
const write = (name: string, content: unknown): string => {
  const path = join(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'cairn-validate-'));
});

describe('cairn validate', () => {
  it('exits 0 for a valid plan', async () => {
    const result = await cairnValidate([fixturePath('plans/good/groups.json'), ...CATALOG]);
    expect(result).toEqual({ code: 0, stdout: 'valid: 10 steps\n', stderr: '' });
  });

  it('exits 1 and prints one "CODE path message" line per error', async () => {
    const file = write('bad.json', plan([step('a', ['ghost']), step('b', ['b'])]));
    const result = await cairnValidate([file, ...CATALOG]);
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')).toEqual([
      'E_UNKNOWN_DEPENDENCY /steps/0/dependsOn/0 unknown step "ghost" in dependsOn',
      'E_SELF_DEPENDENCY /steps/1/dependsOn/0 step "b" depends on itself',
      '',
    ]);
  });

  it('prints (root) for an error about the whole document', async () => {
    const result = await cairnValidate([write('array.json', '[]'), ...CATALOG]);
    expect(result.stdout).toMatch(/^E_FIELD \(root\) a plan must be a JSON object/);
  });

  it('with --json prints exactly one JSON object', async () => {
    const good = await cairnValidate([fixturePath('plans/good/single-step.json'), ...CATALOG, '--json']);
    expect(good).toEqual({ code: 0, stdout: '{"valid":true}\n', stderr: '' });
    const bad = await cairnValidate([fixturePath('plans/bad/E_JSON--trailing-comma.json.txt'), ...CATALOG, '--json']);
    expect(bad.code).toBe(1);
    const parsed = JSON.parse(bad.stdout);
    expect(Object.keys(parsed)).toEqual(['valid', 'errors']);
    expect(parsed).toMatchObject({ valid: false, errors: [{ code: 'E_JSON', path: expect.any(String) }] });
    expect(bad.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('applies the untrusted-plan rules with --generated', async () => {
    const file = write('running.json', plan([step('a', [], { status: 'running' })]));
    expect((await cairnValidate([file, ...CATALOG])).code).toBe(0);
    const generated = await cairnValidate([file, ...CATALOG, '--generated', '--json']);
    expect(generated.code).toBe(1);
    expect(JSON.parse(generated.stdout).errors.map((e: { code: string }) => e.code)).toEqual(['E_NOT_PENDING']);
  });

  it('takes the limits from --max-steps and --max-depth', async () => {
    const chain = write('chain.json', plan([step('a'), step('b', ['a']), step('c', ['b'])]));
    expect((await cairnValidate([chain, ...CATALOG, '--max-steps', '2'])).stdout).toMatch(/^E_TOO_MANY_STEPS/);
    expect((await cairnValidate([chain, ...CATALOG, '--max-depth', '2'])).stdout).toMatch(/^E_TOO_DEEP/);
    expect((await cairnValidate([chain, ...CATALOG, '--max-depth', '3', '--max-steps', '3'])).code).toBe(0);
    const deep = (await cairnValidate([fixturePath('plans/bad/E_TOO_DEEP--chain-of-17.json'), ...CATALOG])).code;
    expect(deep).toBe(1);
    expect(
      (await cairnValidate([fixturePath('plans/bad/E_TOO_DEEP--chain-of-17.json'), ...CATALOG, '--max-depth=17'])).code,
    ).toBe(0);
  });

  it('resolves relative paths against the working directory', async () => {
    writeFileSync(join(dir, 'rel.json'), readFileSync(fixturePath('plans/good/diamond.json')));
    writeFileSync(join(dir, 'catalog.json'), readFileSync(fixturePath('catalog.json')));
    expect((await cairnValidate(['rel.json', '--catalog', 'catalog.json'], dir)).code).toBe(0);
  });

  it('uses the demo catalog by default', async () => {
    expect(DEFAULT_CATALOG_PATH).toBe(join(projectRoot, 'shared', 'catalog', 'demo.json'));
    const demo = JSON.parse(readFileSync(DEFAULT_CATALOG_PATH, 'utf8')) as {
      capabilities: { target: string; sideEffect: string; inputSchema: object; outputSchema: object }[];
    };
    const capability = demo.capabilities.find((c) => c.sideEffect !== 'mutating' && !c.target.startsWith('human:'));
    if (!capability) throw new Error('the demo catalog has no plain capability');
    const { input: _, ...base } = step('a');
    const demoStep = {
      ...base,
      target: capability.target,
      inputSchema: capability.inputSchema,
      outputSchema: capability.outputSchema,
    };
    const file = write('demo-plan.json', plan([demoStep as never]));
    expect(await cairnValidate([file])).toEqual({ code: 0, stdout: 'valid: 1 step\n', stderr: '' });
    expect((await cairnValidate([fixturePath('plans/good/single-step.json'), '--json'])).stdout).toMatch(
      /E_UNKNOWN_TARGET/,
    );
  });

  it.each([
    [[], /missing the plan file/],
    [['a.json', 'b.json'], /exactly one plan file/],
    [['a.json', '--bogus'], /bogus/],
    [['a.json', '--max-steps', '0'], /--max-steps must be a positive integer/],
    [['a.json', '--max-depth', 'ten'], /--max-depth must be a positive integer/],
    [['a.json', '--catalog'], /catalog/],
  ])('exits 2 on bad usage %j', async (args, message) => {
    const result = await cairnValidate(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toMatch(/usage: cairn validate/);
  });

  it('exits 2 when the plan or the catalog cannot be read or used', async () => {
    const missing = await cairnValidate([join(dir, 'nope.json'), ...CATALOG, '--json']);
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toMatch(/cannot read the plan .*nope\.json \(ENOENT\)/);
    const good = fixturePath('plans/good/single-step.json');
    expect((await cairnValidate([good, '--catalog', join(dir, 'nope.json')])).stderr).toMatch(
      /cannot read the catalog/,
    );
    const broken = write('broken-catalog.json', '{"capabilities": [{"target": "tool:x"}]}');
    const refused = await cairnValidate([good, '--catalog', broken]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/cannot use the catalog .*invalid catalog/);
    expect((await cairnValidate([dir, ...CATALOG])).code).toBe(2);
  });

  it('prints its usage with --help', async () => {
    const result = await cairnValidate(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^usage: cairn validate <plan.json>/);
  });
});

describe('bin/cairn.js validate', () => {
  it('runs as a process: exit codes and --json output', () => {
    const cli = (file: string) =>
      spawnSync(process.execPath, ['bin/cairn.js', 'validate', file, ...CATALOG, '--json'], {
        cwd: projectRoot,
        encoding: 'utf8',
        timeout: 30_000,
      });
    const good = cli(fixturePath('plans/good/human-approval.json'));
    expect({ status: good.status, stdout: good.stdout }).toEqual({ status: 0, stdout: '{"valid":true}\n' });
    const bad = cli(fixturePath('plans/bad/E_CYCLE--two-step-loop.json'));
    expect(bad.status).toBe(1);
    expect(JSON.parse(bad.stdout).errors[0]).toMatchObject({
      code: 'E_CYCLE',
      message: 'cycle: fetch -> write -> fetch',
    });
  });
});
