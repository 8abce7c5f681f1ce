/**
 * No import cycles: a module's dependencies point one way, so each file can be read (and loaded) after the files it
 * imports. This reads every TypeScript file of the code (not the tests), follows its relative imports and exports,
 * type-only ones too, and finds the strongly connected components (Tarjan); any component of more than one file, or
 * a file importing itself, is a cycle.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FOLDERS = ['shared', 'functions', 'infra', 'bin', 'scripts', 'bench'];
const SPECIFIER =
  /(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

function sourcesUnder(folder: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(folder, name);
    if (name === 'node_modules' || name.startsWith('.')) return [];
    if (statSync(path).isDirectory()) return sourcesUnder(path);
    return /\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Each file's relative imports that name another source file. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const targets = new Set<string>();
    for (const match of text.matchAll(SPECIFIER)) {
      const target = resolve(dirname(file), match[1] ?? match[2] ?? '');
      const candidates = [target, target.replace(/\.js$/, '.ts'), `${target}.ts`, join(target, 'index.ts')];
      const hit = candidates.find((c) => known.has(c));
      if (hit !== undefined) targets.add(hit);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/** The strongly connected components of more than one file, and files that import themselves. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
      onStack.delete(top);
      component.push(top);
      if (top === node) break;
    }
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

describe('cyclesOf', () => {
  it('finds a circle of three files and a file that imports itself, and nothing in a chain', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['d']],
      ['e', ['f']],
      ['f', []],
    ]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c'], ['d']]);
  });
});

describe('the code', () => {
  it('has no import cycles', () => {
    const files = FOLDERS.flatMap((folder) => sourcesUnder(join(ROOT, folder)));
    expect(files.length).toBeGreaterThan(100);
    const graph = importGraph(files);
    const cycles = cyclesOf(graph).map((c) => c.map((file) => relative(ROOT, file)));
    expect(cycles).toEqual([]);
  });
});
