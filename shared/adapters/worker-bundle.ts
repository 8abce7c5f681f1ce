/**
 * A worker's module as one file, for `fork` or `new Worker`: running from the TypeScript sources (the embedded
 * runtime, the tests), a worker cannot load them through tsx in reasonable time (seconds), so its entry is bundled
 * once per process with esbuild (tsx's own dependency) into a temporary file, which loads in a few hundred
 * milliseconds. A file that is not TypeScript (a bundle's built worker) is used as it is.
 */
import { createHash } from 'node:crypto';
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The file to load for the worker whose entry is `file`; `name` prefixes the temporary bundle's name. */
export async function bundledWorkerFile(file: URL, name: string): Promise<string> {
  if (!file.pathname.endsWith('.ts')) return fileURLToPath(file);
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
  const code = built.outputFiles[0]?.text;
  if (code === undefined) throw new Error(`esbuild built nothing from ${file.href}`);
  // Named by its content: every process of the same sources shares one file instead of leaving one each.
  const path = join(tmpdir(), `${name}-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.cjs`);
  if (!existsSync(path)) {
    const partial = `${path}.${process.pid}`;
    writeFileSync(partial, code);
    renameSync(partial, path);
  }
  return path;
}
