/**
 * Every AWS SDK client on the deployed path (functions/, shared/) is made by the factory in
 * shared/adapters/aws/clients.ts, which gives it a connection and a request timeout. A `new XxxClient(` of an
 * `@aws-sdk/client-*` class anywhere else would make a client that can wait forever.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FACTORY = join('shared', 'adapters', 'aws', 'clients.ts');

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
  it('are constructed only by the factory on the deployed path (functions/, shared/)', () => {
    const files = [...sources(join(ROOT, 'functions')), ...sources(join(ROOT, 'shared'))];
    expect(files.length).toBeGreaterThan(50);
    const offenders = files
      .filter((file) => relative(ROOT, file) !== FACTORY)
      .flatMap((file) =>
        constructedSdkClients(readFileSync(file, 'utf8')).map((name) => `${relative(ROOT, file)}: ${name}`),
      );
    expect(offenders).toEqual([]);
  });

  it('finds a construction when there is one (the check above can fail)', () => {
    const text =
      "import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';\nconst c = new SFNClient({});";
    expect(constructedSdkClients(text)).toEqual(['SFNClient']);
    expect(constructedSdkClients(readFileSync(join(ROOT, FACTORY), 'utf8')).length).toBeGreaterThan(5);
  });
});
