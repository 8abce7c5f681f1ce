/**
 * The embedded outbox's journal and stream: a batch the relay failed on every try is kept (in the data directory's
 * file across a restart), and a redrive relays it once and forgets it.
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openOutboxJournal } from '../../../infra/local/outbox-journal.ts';
import { createLocalOutboxStream } from '../../../shared/adapters/local/outbox-stream.ts';
import type { StreamRecord } from '../../../shared/events/outbox.ts';

const record = (n: number): StreamRecord => ({ eventName: 'MODIFY', dynamodb: { NewImage: { n: { S: String(n) } } } });

const dirs: string[] = [];
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-outbox-journal-'));
  dirs.push(dir);
  return join(dir, 'outbox.jsonl');
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('openOutboxJournal', () => {
  it('keeps a batch across a reopen until it is relayed, and ignores a torn last line', () => {
    const path = tempFile();
    const first = openOutboxJournal(path);
    first.keep({ id: 'b1', records: [record(1)] });
    first.keep({ id: 'b2', records: [record(2)] });
    first.relayed('b1');
    first.close();
    appendFileSync(path, '{"t":"kept","id":"b3","rec');

    const reopened = openOutboxJournal(path);
    expect(reopened.kept()).toEqual([{ id: 'b2', records: [record(2)] }]);
    reopened.relayed('b2');
    reopened.close();
    expect(openOutboxJournal(path).kept()).toEqual([]);
  });
});

describe('createLocalOutboxStream', () => {
  it('keeps a batch its relay failed every try, and relays it once on a redrive', async () => {
    let down = true;
    const relayed: StreamRecord[][] = [];
    const errors: unknown[] = [];
    const stream = createLocalOutboxStream(
      {
        relay: async (records) => {
          if (down) throw new Error('down');
          relayed.push([...records]);
        },
      },
      { tries: 2, onError: (error) => errors.push(error) },
    );
    stream.accept(record(1));
    await stream.drain();
    expect(relayed).toEqual([]);
    expect(errors).toHaveLength(1);

    expect(await stream.redrive()).toEqual({ found: 1, relayed: 0, failed: 1 });
    down = false;
    expect(await stream.redrive()).toEqual({ found: 1, relayed: 1, failed: 0 });
    expect(relayed).toEqual([[record(1)]]);
    expect(await stream.redrive()).toEqual({ found: 0, relayed: 0, failed: 0 });
  });
});
