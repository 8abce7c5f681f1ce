/**
 * A worker's module as one file, for `fork` or `new Worker`: running from the TypeScript sources (the embedded
 * runtime, the tests), a worker cannot load them through tsx in reasonable time (seconds), so its entry is bundled
 * once per process with esbuild (tsx's own dependency) into a temporary file, which loads in a few hundred
 * milliseconds. A file that is not TypeScript (a bundle's built worker) is used as it is.
 *
 * The bundle is written as esbuild's bytes, named by esbuild's own hash of them: decoding a bundle of several MB
 * to text and hashing it again held the embedded server's event loop for 170 ms on a busy host (bench:hostile).
 */
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Per process: every pool of the same worker (one per embedded stack, several in a test file) shares one build. */
const bundles = new Map<string, Promise<string>>();

/** The file to load for the worker whose entry is `file`; `name` prefixes the temporary bundle's name. */
export function bundledWorkerFile(file: URL, name: string): Promise<string> {
  if (!file.pathname.endsWith('.ts')) return Promise.resolve(fileURLToPath(file));
  const key = `${name} ${file.href}`;
  const known = bundles.get(key);
  if (known !== undefined) return known;
  const bundle = build(file, name);
  bundles.set(key, bundle);
  // A failed build is tried again by the next caller.
  bundle.catch(() => bundles.delete(key));
  return bundle;
}

async function build(file: URL, name: string): Promise<string> {
  // A specifier the Lambda bundler leaves alone: a bundle passes its built worker and never gets here.
  const esbuildModule = 'esbuild';
  const esbuild = (await import(esbuildModule)) as typeof import('esbuild');
  const built = await esbuild.build({
    entryPoints: [fileURLToPath(file)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  });
  const output = built.outputFiles[0];
  if (output === undefined) throw new Error(`esbuild built nothing from ${file.href}`);
  // Named by its content: every process of the same sources shares one file instead of leaving one each. Hex, so
  // that names differing only in case stay apart on a case-insensitive file system.
  const path = join(tmpdir(), `${name}-${Buffer.from(output.hash).toString('hex')}.cjs`);
  if (!existsSync(path)) {
    const partial = `${path}.${process.pid}`;
    writeFileSync(partial, output.contents);
    renameSync(partial, path);
  }
  return path;
}
