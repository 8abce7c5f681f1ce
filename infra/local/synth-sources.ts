/**
 * Everything the synthesized state machines can depend on, as one hash: the key of the synthesis cache
 * (synth-cache.ts). It errs on the side of a miss, since a stale entry would run ASL that is not the one deployed:
 * - every file under `infra/`, whatever it is;
 * - every project file the synthesis entries import, transitively, as esbuild (the resolver tsx uses) follows
 *   them: static imports, re-exports, JSON, `import('…')` and `require('…')`; an import it cannot follow (a
 *   computed specifier, a missing file) is an error, and the caller does not cache;
 * - the installed `package.json` of every package those files import (aws-cdk-lib, constructs, ...), and the
 *   project's package.json, package-lock.json and tsconfig.json;
 * - the Node.js version, the `CDK_*`/`JSII_*` environment (what the CDK reads from the environment, with the
 *   contents of a file a variable names) and the synthesis config, with the contents of a catalog file it names.
 * The test synth-cache.test.ts checks that every project file a real synthesis loads or reads is among these files.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** Bump when the cache's contents or this key's recipe change, so older entries are never read. */
export const SYNTH_CACHE_FORMAT = 1;
export const PROJECT_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Where the synthesis starts: the module that builds the app, and the stack it builds. */
export const SYNTH_ENTRIES: readonly string[] = ['infra/local/synth.ts', 'infra/stack.ts'];
/** Hashed whole, every file in them, imported or not. */
const WHOLE_DIRECTORIES: readonly string[] = ['infra'];
const PROJECT_FILES: readonly string[] = ['package.json', 'package-lock.json', 'tsconfig.json'];
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git', 'cdk.out', '.cairn']);
const ENVIRONMENT = /^(?:CDK|JSII)_/;
/**
 * A dynamic `import(…)` or `require(…)` (esbuild's `__require`) left in the bundle with a computed argument: esbuild
 * inlines every literal one it can resolve, and says nothing of the others, so the bundle is where they show.
 */
const COMPUTED_IMPORT = /(?<![\w$.])(?:import|require|__require)\s*\(\s*(?!["'`])/;

export class SynthSourcesError extends Error {
  override readonly name = 'SynthSourcesError';
}

export interface SynthSources {
  /** sha256 (hex) of everything below. */
  readonly key: string;
  /** Project files in the key, relative to the root with `/`, sorted. */
  readonly files: readonly string[];
  /** Packages in the key, by name: their installed version. */
  readonly packages: Readonly<Record<string, string>>;
}

export interface SynthSourcesOptions {
  /** The project root (tests: a small fake project). */
  readonly root?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Computes the key of a synthesis with this config; throws SynthSourcesError when it cannot be sure of it. */
export async function synthSources(config: unknown, options: SynthSourcesOptions = {}): Promise<SynthSources> {
  const root = resolve(options.root ?? PROJECT_ROOT);
  const env = options.env ?? process.env;
  const files = new Set<string>(WHOLE_DIRECTORIES.flatMap((directory) => filesUnder(join(root, directory))));
  for (const file of PROJECT_FILES) if (existsSync(join(root, file))) files.add(join(root, file));
  const packages = new Map<string, string>();
  for (const { file, imports } of await importGraph(root)) {
    files.add(file);
    for (const specifier of imports) {
      const name = packageName(specifier);
      if (!packages.has(name)) packages.set(name, installedManifest(name, dirname(file), root));
    }
  }

  const sorted = [...files].sort();
  const hash = createHash('sha256');
  const part = (label: string, value: string | Buffer): void => {
    hash.update(`${label}\u0000${value.length}\u0000`);
    hash.update(value);
  };
  part('format', String(SYNTH_CACHE_FORMAT));
  part('node', process.version);
  part('config', canonical(config));
  const catalogFile = (config as { catalogFile?: unknown } | null)?.catalogFile;
  if (typeof catalogFile === 'string') part('catalogFile', readFileSync(resolve(root, catalogFile)));
  for (const name of Object.keys(env)
    .filter((key) => ENVIRONMENT.test(key))
    .sort()) {
    const value = env[name] ?? '';
    part(`env:${name}`, value);
    // The CDK hands large context over in a file named by a variable: what counts is the file's contents.
    if (value !== '' && isFile(resolve(root, value))) part(`env-file:${name}`, readFileSync(resolve(root, value)));
  }
  for (const file of sorted) part(`file:${toPosix(relative(root, file))}`, readFileSync(file));
  const versions: Record<string, string> = {};
  for (const [name, manifest] of [...packages].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    part(`package:${name}`, manifest);
    versions[name] = String((JSON.parse(manifest) as { version?: unknown }).version);
  }
  return { key: hash.digest('hex'), files: sorted.map((file) => toPosix(relative(root, file))), packages: versions };
}

interface GraphNode {
  readonly file: string;
  /** Its imports of packages (bare specifiers, builtins left out). */
  readonly imports: readonly string[];
}

/** The project files the entries reach, with esbuild's resolver; packages stay outside (external). */
async function importGraph(root: string): Promise<GraphNode[]> {
  const entryPoints = SYNTH_ENTRIES.map((entry) => {
    const path = join(root, entry);
    if (!isFile(path)) throw new SynthSourcesError(`${entry}: no such file`);
    return path;
  });
  let result: Awaited<ReturnType<typeof build>>;
  try {
    result = await build({
      entryPoints,
      absWorkingDir: root,
      bundle: true,
      write: false,
      metafile: true,
      outdir: join(root, '.synth-sources-out'),
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
      legalComments: 'none',
    });
  } catch (error) {
    throw new SynthSourcesError(`cannot follow the imports of the synthesis: ${(error as Error).message}`);
  }
  // A warning is an import esbuild could not follow for sure (a computed `require`, an `import()` of a variable).
  const warning = result.warnings[0];
  if (warning !== undefined) {
    const where = warning.location ? `${warning.location.file}:${warning.location.line}: ` : '';
    throw new SynthSourcesError(`cannot follow the imports of the synthesis: ${where}${warning.text}`);
  }
  for (const output of result.outputFiles ?? []) {
    const computed = COMPUTED_IMPORT.exec(output.text);
    if (computed) {
      const line = output.text
        .slice(output.text.lastIndexOf('\n', computed.index) + 1)
        .split('\n')[0]
        ?.trim();
      throw new SynthSourcesError(`cannot follow the imports of the synthesis: a computed import (${line})`);
    }
  }
  return Object.entries(result.metafile?.inputs ?? {}).map(([path, input]) => {
    const file = resolve(root, path);
    if (!isFile(file)) throw new SynthSourcesError(`${path}: an input esbuild reports that is not a file`);
    const imports = input.imports
      .filter((entry) => entry.external === true && !isBuiltin(entry.path))
      .map((entry) => entry.path);
    return { file, imports };
  });
}

function filesUnder(directory: string): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRECTORIES.has(entry.name) ? [] : filesUnder(path);
    return entry.isFile() ? [path] : [];
  });
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/** The installed package.json of a package, found as Node finds it: node_modules upwards from the importer. */
function installedManifest(name: string, from: string, root: string): string {
  for (let directory = from; ; directory = dirname(directory)) {
    const manifest = join(directory, 'node_modules', name, 'package.json');
    if (isFile(manifest)) return readFileSync(manifest, 'utf8');
    if (dirname(directory) === directory) break;
  }
  throw new SynthSourcesError(`${relative(root, from) || '.'}: the package ${name} is not installed`);
}

/** JSON with sorted keys, so the same config is always the same text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function toPosix(path: string): string {
  return path.split(sep).join('/');
}
