/**
 * The suite runs in two vitest projects (vitest.config.ts): unit, CDK and lint tests share one module graph per
 * worker, and tests that start a stack or replace a module get a fresh graph per file. A file in neither project
 * would silently never run, one in both would run twice, and a `vi.mock` (or an AWS client class mocked and never
 * restored) in the shared graph would leak into every later file of its worker.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ISOLATED, MOCKING_FILES, SHARED_GRAPH } from '../../vitest.config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The folder a `test/<folder>/**\/*.test.ts` glob covers. */
function folderOf(glob: string): string {
  const folder = glob.replace(/\/\*\*\/\*\.test\.ts$/, '/');
  if (folder === glob) throw new Error(`not a folder glob: ${glob}`);
  return folder;
}

const inShared = (file: string) =>
  SHARED_GRAPH.some((glob) => file.startsWith(folderOf(glob))) && !MOCKING_FILES.includes(file);
const inIsolated = (file: string) =>
  ISOLATED.some((glob) => file.startsWith(folderOf(glob))) || MOCKING_FILES.includes(file);

describe('the test projects', () => {
  const files = testFiles(join(ROOT, 'test'));

  it('run every test file exactly once', () => {
    expect(files.length).toBeGreaterThan(300);
    const misplaced = files.filter((file) => inShared(file) === inIsolated(file));
    expect(misplaced).toEqual([]);
  });

  it('give every file that replaces a module a graph of its own', () => {
    const mocking = files.filter((file) => /\bvi\.(do)?[mM]ock\(/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(mocking.length).toBeGreaterThan(0);
    expect(mocking.filter(inShared)).toEqual([]);
  });

  it('restore, in a shared graph, every AWS client class a file mocks', () => {
    const leaking = files.filter(inShared).flatMap((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const mocked = [...text.matchAll(/(\w+) = mockClient\(/g)].map((match) => match[1] ?? '');
      return mocked.filter((name) => !text.includes(`${name}.restore()`)).map((name) => `${file}: ${name}`);
    });
    expect(leaking).toEqual([]);
  });

  it('name only mocking files that exist', () => {
    expect(MOCKING_FILES.filter((file) => !files.includes(file))).toEqual([]);
  });
});
