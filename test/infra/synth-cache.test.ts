/**
 * The synthesis cache on a small fake project (infra/stack.ts, infra/local/synth.ts, the shared files they import,
 * an installed aws-cdk-lib), with a counting stand-in for the synthesis: when an entry answers, when the sources
 * or the config make a miss, and what a damaged entry does. The real project is in synth-cache-project.test.ts.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type LoadMachinesOptions,
  loadStateMachines,
  synthCacheDirFromEnv,
  synthesisProgress,
} from '../../infra/local/synth-cache.ts';
import { synthSources } from '../../infra/local/synth-sources.ts';
import { type AslDefinition, machinesOf } from '../../infra/local/template.ts';

let root: string;
let cacheDir: string;
let synthesized: number;

const write = (path: string, text: string): void => {
  mkdirSync(dirname(join(root, path)), { recursive: true });
  writeFileSync(join(root, path), text);
};

/** The fake synthesis: its step machine's Wait lasts what shared/limits.ts says, so a change shows in the ASL. */
const synthesize: LoadMachinesOptions['synthesize'] = () => {
  synthesized += 1;
  const seconds = Number(/WAIT = (\d+)/.exec(readFileSync(join(root, 'shared/limits.ts'), 'utf8'))?.[1]);
  const run: AslDefinition = { StartAt: 'Plan', States: { Plan: { Type: 'Task', Resource: 'arn:x', End: true } } };
  const step: AslDefinition = {
    Comment: 'fake',
    StartAt: 'Backoff',
    States: { Backoff: { Type: 'Wait', Seconds: seconds, End: true } },
  };
  return machinesOf(run, step, { PlannerFn: 'Planner' });
};

const load = (config = {}, extra: Partial<LoadMachinesOptions> = {}) =>
  loadStateMachines(config, { root, cacheDir, synthesize, env: {}, ...extra });

const entryFiles = (): string[] => readdirSync(cacheDir).filter((name) => name.endsWith('.json'));

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'cairn-synth-project-'));
  cacheDir = join(root, '.cairn', 'cache');
  synthesized = 0;
  write('package.json', '{ "name": "fake", "type": "module" }\n');
  write('node_modules/aws-cdk-lib/package.json', '{ "name": "aws-cdk-lib", "version": "2.276.0" }\n');
  write('shared/limits.ts', 'export const WAIT = 5;\n');
  write('shared/unrelated.ts', 'export const UNRELATED = 1;\n');
  write(
    'infra/stack.ts',
    "import { App } from 'aws-cdk-lib';\nimport { WAIT } from '../shared/limits.ts';\nexport const stack = [App, WAIT];\n",
  );
  write('infra/local/synth.ts', "export { stack } from '../stack.ts';\n");
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('synthSources', () => {
  it('keys the infra files, the shared files they import and the packages they use', async () => {
    const sources = await synthSources({}, { root, env: {} });

    expect(sources.files).toEqual(['infra/local/synth.ts', 'infra/stack.ts', 'package.json', 'shared/limits.ts']);
    expect(sources.packages).toEqual({ 'aws-cdk-lib': '2.276.0' });
  });

  it('refuses a computed import, which it cannot follow', async () => {
    write('infra/stack.ts', "const name = 'x';\nexport const stack = await import(name);\n");

    await expect(synthSources({}, { root, env: {} })).rejects.toThrow(/computed import/);
  });

  it('refuses an import of a file that does not exist', async () => {
    write('infra/stack.ts', "export { WAIT } from '../shared/missing.ts';\n");

    await expect(synthSources({}, { root, env: {} })).rejects.toThrow(/cannot follow the imports/);
  });
});

describe('loadStateMachines', () => {
  it('synthesizes on a first boot, then answers from the cache while the sources are unchanged', async () => {
    const first = await load();
    const second = await load();

    expect(first.outcome).toMatchObject({ kind: 'synthesized', reason: 'first' });
    expect(second.outcome.kind).toBe('cached');
    expect(synthesized).toBe(1);
    expect(second.machines.step).toEqual(first.machines.step);
    expect(second.machines.functionKeys).toEqual({ PlannerFn: 'Planner' });
    expect(second.machines.functionOf('arn:aws:lambda:us-east-1:123456789012:function:PlannerFn')).toBe('Planner');
  });

  it('synthesizes again when a shared file the stack imports changes, and caches the new result', async () => {
    await load();
    write('shared/limits.ts', 'export const WAIT = 7;\n');

    const changed = await load();
    const again = await load();

    expect(changed.outcome).toMatchObject({ kind: 'synthesized', reason: 'changed' });
    expect(changed.machines.step.States.Backoff?.Seconds).toBe(7);
    expect(again.outcome.kind).toBe('cached');
    expect(again.machines.step.States.Backoff?.Seconds).toBe(7);
    expect(synthesized).toBe(2);
  });

  it('answers from the cache when a file the stack does not import changes', async () => {
    await load();
    write('shared/unrelated.ts', 'export const UNRELATED = 2;\n');

    expect((await load()).outcome.kind).toBe('cached');
  });

  it.each([
    ['a file is added under infra/, imported or not', () => write('infra/notes.md', 'a note\n')],
    ['the package lock changes', () => write('package-lock.json', '{ "lockfileVersion": 3 }\n')],
    [
      'the installed aws-cdk-lib changes',
      () => write('node_modules/aws-cdk-lib/package.json', '{ "name": "aws-cdk-lib", "version": "2.277.0" }\n'),
    ],
  ])('misses when %s', async (_what, change) => {
    await load();
    change();

    expect((await load()).outcome).toMatchObject({ kind: 'synthesized', reason: 'changed' });
  });

  it('misses for another config, or another CDK environment', async () => {
    await load({ maxSteps: 64 });

    expect((await load({ maxSteps: 65 })).outcome.kind).toBe('synthesized');
    expect((await load({ maxSteps: 64 }, { env: { CDK_DEFAULT_REGION: 'eu-west-1' } })).outcome.kind).toBe(
      'synthesized',
    );
    expect((await load({ maxSteps: 64 })).outcome.kind).toBe('cached');
  });

  it('misses when a file a CDK variable names changes', async () => {
    write('context.json', '{ "a": 1 }\n');
    const env = { CDK_CONTEXT_FILE: join(root, 'context.json') };
    await load({}, { env });
    write('context.json', '{ "a": 2 }\n');

    expect((await load({}, { env })).outcome).toMatchObject({ kind: 'synthesized', reason: 'changed' });
  });

  it.each([
    ['cut short', (text: string) => text.slice(0, text.length / 2)],
    ['not JSON', () => '\u0000\u0000garbage'],
    ['of another shape', () => '{ "format": 1, "machines": [] }'],
    ['edited, its digest left as it was', (text: string) => text.replace('"Seconds":5', '"Seconds":50')],
  ])('treats an entry %s as a miss, synthesizes and rewrites it', async (_what, damage) => {
    await load();
    const [entry] = entryFiles();
    const path = join(cacheDir, entry as string);
    writeFileSync(path, damage(readFileSync(path, 'utf8')));

    const damaged = await load();
    const after = await load();

    expect(damaged.outcome).toMatchObject({ kind: 'synthesized', reason: 'corrupt' });
    expect(damaged.machines.step.States.Backoff?.Seconds).toBe(5);
    expect(after.outcome.kind).toBe('cached');
    expect(after.machines.step.States.Backoff?.Seconds).toBe(5);
    expect(synthesized).toBe(2);
  });

  it('synthesizes and caches nothing when the sources cannot be keyed for sure', async () => {
    write('infra/stack.ts', "const name = 'x';\nexport const stack = await import(name);\n");

    const outcome = (await load()).outcome;

    expect(outcome).toMatchObject({ kind: 'synthesized', reason: 'unkeyed' });
    expect(outcome.kind === 'synthesized' && outcome.detail).toMatch(/^not cached: .*computed import/);
    expect((await load()).outcome).toMatchObject({ kind: 'synthesized', reason: 'unkeyed' });
    expect(readdirSync(root)).not.toContain('.cairn');
  });

  it('neither reads nor writes a cache when it is off', async () => {
    await load();
    const off = await load({}, { cacheDir: false });

    expect(off.outcome).toMatchObject({ kind: 'synthesized', reason: 'disabled' });
    expect(synthesized).toBe(2);
    expect(entryFiles()).toHaveLength(1);
  });

  it('tells before it synthesizes, with why, and nothing on a hit', async () => {
    const told: string[] = [];
    const onSynthesize = (reason: string) => told.push(reason);

    await load({}, { onSynthesize });
    await load({}, { onSynthesize });
    write('shared/limits.ts', 'export const WAIT = 9;\n');
    await load({}, { onSynthesize });

    expect(told).toEqual(['first', 'changed']);
  });

  it('keeps a bounded number of entries, the one just written among them', async () => {
    for (let maxSteps = 1; maxSteps <= 10; maxSteps++) await load({ maxSteps });

    expect(entryFiles()).toHaveLength(8);
    expect((await load({ maxSteps: 10 })).outcome.kind).toBe('cached');
  });
});

describe('npm start and the synthesis cache', () => {
  it('puts the cache in the data directory unless CAIRN_SYNTH_CACHE_DIR moves it or turns it off', () => {
    expect(synthCacheDirFromEnv({})).toBe(join('.cairn', 'cache'));
    expect(synthCacheDirFromEnv({}, 'elsewhere')).toBe(join('elsewhere', 'cache'));
    expect(synthCacheDirFromEnv({ CAIRN_SYNTH_CACHE_DIR: '/tmp/c' }, 'elsewhere')).toBe('/tmp/c');
    expect(synthCacheDirFromEnv({ CAIRN_SYNTH_CACHE_DIR: 'off' })).toBe(false);
  });

  it('says that a first boot synthesizes and that later ones will not', () => {
    expect(synthesisProgress('first')).toBe('cairn: synthesizing the state machines (first boot, cached afterwards)…');
  });
});
