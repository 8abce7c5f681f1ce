import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLedgerFile } from '../../../infra/local/ledger-file.ts';
import { createConformancePack } from '../../../shared/capabilities/conformance.ts';
import { aCall } from '../../support/capability-call.ts';

describe('the conformance ledger kept in a file', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('writes each entry to the file before answering and gives them back to a ledger opened later', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-ledger-'));
    dirs.push(dir);
    const path = join(dir, 'conformance-ledger.jsonl');
    const before = createConformancePack();
    const file = openLedgerFile(path);
    before.ledger.keepIn(file);
    before.ledger.append('one', aCall({ stepId: 'a' }));
    // On disk as soon as append returned: what a kill -9 right after the answer leaves behind.
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(1);
    file.close();
    appendFileSync(path, '{"entryId":"ledger-0000');

    const after = createConformancePack();
    const reopened = openLedgerFile(path);
    after.ledger.keepIn(reopened);
    const next = after.ledger.append('two', aCall({ stepId: 'b' }));
    reopened.close();

    expect(next.entryId).toBe('ledger-000002');
    expect(after.ledger.entries().map((e) => [e.entryId, e.entry, e.stepId])).toEqual([
      ['ledger-000001', 'one', 'a'],
      ['ledger-000002', 'two', 'b'],
    ]);
    const third = createConformancePack();
    third.ledger.keepIn(openLedgerFile(path));
    expect(third.ledger.entries()).toHaveLength(2);
  });
});
