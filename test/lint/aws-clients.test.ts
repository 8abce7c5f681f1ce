/**
 * Every AWS SDK client cairn makes (functions/, shared/, infra/, bin/, bench/, scripts/) is made by the factory in
 * shared/adapters/aws/clients.ts, which gives it a connection and a request timeout. A `new XxxClient(` of an
 * `@aws-sdk/client-*` class anywhere else would make a client that can wait forever. The one exception is the
 * embedded store's client, whose request handler answers in process (no socket to hang on).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FACTORY = join('shared', 'adapters', 'aws', 'clients.ts');
/** Clients whose request handler is not a socket: nothing to time out. */
const IN_PROCESS = new Set([join('infra', 'local', 'dynalite-in-process.ts')]);
const SCANNED = ['functions', 'shared', 'infra', 'bin', 'bench', 'scripts'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.(ts|mts)$/.test(entry.name) ? [path] : [];
  });
}

/** The client classes a file imports from the AWS SDK, and which of them it constructs. */
function constructedSdkClients(text: string): string[] {
  const imported = new Set<string>();
  for (const match of text.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'@aws-sdk\/client-[a-z0-9-]+'/g))
    for (const name of (match[1] ?? '').split(',')) {
      const clean = name.trim().replace(/^type\s+/, '');
      if (/Client$/.test(clean)) imported.add(clean);
    }
  return [...imported].filter((name) => new RegExp(`new\\s+${name}\\s*\\(`).test(text));
}

describe('AWS SDK clients', () => {
  it('are constructed only by the factory, wherever cairn makes one', () => {
    const files = SCANNED.flatMap((dir) => sources(join(ROOT, dir)));
    expect(files.length).toBeGreaterThan(50);
    const offenders = files
      .filter((file) => relative(ROOT, file) !== FACTORY && !IN_PROCESS.has(relative(ROOT, file)))
      .flatMap((file) =>
        constructedSdkClients(readFileSync(file, 'utf8')).map((name) => `${relative(ROOT, file)}: ${name}`),
      );
    expect(offenders).toEqual([]);
  });

  it('are constructed by the factory with their service timeouts, each one', () => {
    const text = readFileSync(join(ROOT, FACTORY), 'utf8');
    const constructions = [...text.matchAll(/new\s+(\w+Client)\s*\(([^;]*)/g)];
    expect(constructions.length).toBe(constructedSdkClients(text).length);
    for (const [, name, args] of constructions) expect(args, name).toMatch(/^\s*withTimeouts\(/);
  });

  it('finds a construction when there is one (the check above can fail)', () => {
    const text =
      "import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';\nconst c = new SFNClient({});";
    expect(constructedSdkClients(text)).toEqual(['SFNClient']);
    expect(constructedSdkClients(readFileSync(join(ROOT, FACTORY), 'utf8')).length).toBeGreaterThan(5);
  });
});
