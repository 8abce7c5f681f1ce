/**
 * A decision that closes steps or runs must not miss an approval created a moment ago: services read a run's
 * approvals through `listRunApprovals` (consistent reads of the run's own items), never through `listApprovals`,
 * which reads an index that DynamoDB updates eventually. The index serves people's queues (the API) only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SERVICES = join(ROOT, 'shared', 'services');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('decisions in shared/services', () => {
  it('read a run’s approvals consistently, never through the eventually consistent index', () => {
    const files = sources(SERVICES);
    expect(files.length).toBeGreaterThan(10);
    const offenders = files
      .filter((file) => /\.listApprovals\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
    expect(files.some((file) => /\.listRunApprovals\(/.test(readFileSync(file, 'utf8')))).toBe(true);
  });
});
