/**
 * The conformance ledger's file in the data directory (`conformance-ledger.jsonl`): one JSON line per entry, written
 * with one `write` before the ledger capability answers, so a crash test sees from `GET /conformance/ledger` whether
 * a side effect happened twice. A torn last line (the machine died mid-write) is dropped: its call never answered.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { LedgerEntry, LedgerJournal } from '../../shared/capabilities/conformance.ts';

export const LEDGER_FILE = 'conformance-ledger.jsonl';

export interface LedgerFile extends LedgerJournal {
  close(): void;
}

export function openLedgerFile(path: string): LedgerFile {
  let fd = openSync(path, 'a');
  // A torn last line must not swallow the next entry: start the next one on a line of its own.
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8');
    if (text.length > 0 && !text.endsWith('\n')) writeSync(fd, '\n');
  }
  return {
    load() {
      if (!existsSync(path)) return [];
      const entries: LedgerEntry[] = [];
      for (const line of readFileSync(path, 'utf8').split('\n')) {
        if (line.trim() === '') continue;
        try {
          entries.push(JSON.parse(line) as LedgerEntry);
        } catch {
          // A torn line.
        }
      }
      return entries;
    },
    append(entry) {
      if (fd < 0) throw new Error('the conformance ledger file is closed');
      writeSync(fd, `${JSON.stringify(entry)}\n`);
    },
    close() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
    },
  };
}
