/**
 * Fault injection belongs to the embedded runtime: only infra/local (and bin, which starts it) may read CAIRN_FAULTS.
 * The deployed path — the functions, everything under shared/, the CDK app — must never mention it, so a deployment
 * cannot be made to inject faults by an environment variable.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MENTION = /CAIRN_FAULTS/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.(ts|mts|js|mjs|json)$/.test(entry.name) ? [path] : [];
  });
}

const mentioning = (files: readonly string[], mention = MENTION): string[] =>
  files.filter((file) => mention.test(readFileSync(file, 'utf8'))).map((file) => relative(ROOT, file));

/** The variables that turn on the embedded runtime's AWS quotas (infra/local/quotas): also never deployed. */
const QUOTAS = /CAIRN_(AWS_QUOTAS|LAMBDA_CONCURRENCY|SFN_START_RATE)/;

describe('CAIRN_FAULTS', () => {
  it('is mentioned nowhere on the deployed path (functions/, shared/, infra/ outside infra/local)', () => {
    const local = join(ROOT, 'infra', 'local');
    const deployed = [
      ...sources(join(ROOT, 'functions')),
      ...sources(join(ROOT, 'shared')),
      ...sources(join(ROOT, 'infra')).filter((file) => !file.startsWith(local)),
    ];
    expect(deployed.length).toBeGreaterThan(50);
    expect(mentioning(deployed)).toEqual([]);
  });

  it('is read by the embedded runtime (what the check above keeps out of the deployed path)', () => {
    expect(mentioning(sources(join(ROOT, 'infra', 'local')))).toContain(join('infra', 'local', 'faults', 'config.ts'));
  });
});

describe('CAIRN_AWS_QUOTAS', () => {
  it('is mentioned nowhere on the deployed path, and read by the embedded runtime', () => {
    const local = join(ROOT, 'infra', 'local');
    const deployed = [
      ...sources(join(ROOT, 'functions')),
      ...sources(join(ROOT, 'shared')),
      ...sources(join(ROOT, 'infra')).filter((file) => !file.startsWith(local)),
    ];
    expect(mentioning(deployed, QUOTAS)).toEqual([]);
    expect(mentioning(sources(local), QUOTAS)).toContain(join('infra', 'local', 'quotas', 'aws-quotas.ts'));
  });
});
