/**
 * The synthesis cache on this project's real CDK app: what it keeps is what a fresh synthesis gives, its key covers
 * every project file a synthesis loads or reads, and a boot that finds its entry never loads the CDK. The last two
 * run in child processes (test/support/synth-loads.mjs), which start with nothing loaded.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { synthesizeStateMachines } from '../../infra/local/synth.ts';
import { loadStateMachines } from '../../infra/local/synth-cache.ts';
import { PROJECT_ROOT, synthSources } from '../../infra/local/synth-sources.ts';
import { type ExtractedMachines, placeholderFunctionArn } from '../../infra/local/template.ts';

const run = promisify(execFile);
const CHILD = join(PROJECT_ROOT, 'test', 'support', 'synth-loads.mjs');
const SLOW = 180_000;

async function child(...args: string[]): Promise<unknown> {
  const { stdout } = await run(process.execPath, [CHILD, ...args], { cwd: PROJECT_ROOT, maxBuffer: 1 << 24 });
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '');
}

let cacheDir: string;
let fresh: ExtractedMachines;
let written: Awaited<ReturnType<typeof loadStateMachines>>;

beforeAll(async () => {
  cacheDir = mkdtempSync(join(tmpdir(), 'cairn-synth-cache-'));
  fresh = synthesizeStateMachines();
  written = await loadStateMachines({}, { cacheDir, synthesize: () => fresh });
}, SLOW);

afterAll(() => {
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('the synthesis cache on the real CDK app', () => {
  it('answers with definitions equal to a fresh synthesis', async () => {
    const cached = await loadStateMachines(
      {},
      {
        cacheDir,
        synthesize: () => {
          throw new Error('a hit must not synthesize');
        },
      },
    );

    expect(written.outcome).toMatchObject({ kind: 'synthesized', reason: 'first' });
    expect(cached.outcome.kind).toBe('cached');
    expect(cached.machines.run).toEqual(fresh.run);
    expect(cached.machines.step).toEqual(fresh.step);
    expect(cached.machines.functionKeys).toEqual(fresh.functionKeys);
    expect(Object.keys(fresh.functionKeys).length).toBeGreaterThan(0);
    for (const logicalId of Object.keys(fresh.functionKeys)) {
      const arn = placeholderFunctionArn(logicalId);
      expect(cached.machines.functionOf(arn)).toBe(fresh.functionOf(arn));
    }
  });

  it(
    'keys every project file a synthesis imports or reads',
    async () => {
      const { files: loaded } = (await child('synth')) as { files: string[] };
      const { files: keyed } = await synthSources({});

      expect(loaded).toContain('infra/stack.ts');
      expect(loaded.filter((file) => !file.startsWith('infra/')).length).toBeGreaterThan(0);
      expect(loaded.filter((file) => !keyed.includes(file))).toEqual([]);
    },
    SLOW,
  );

  it(
    'boots from a cache entry without loading aws-cdk-lib',
    async () => {
      // The entry written before all, for the same config and sources.
      const report = await child('boot', cacheDir);

      expect(report).toEqual({ outcome: 'cached', cdkLoaded: false });
    },
    SLOW,
  );
});
