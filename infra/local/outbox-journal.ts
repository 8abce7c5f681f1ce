/**
 * What the deployed outbox keeps durably and the embedded stream would otherwise hold only in memory: the stream
 * batches its relay failed on every try (shared/adapters/local/outbox-stream.ts), until a redrive relays them. An
 * append-only file of JSON lines in the data directory, folded on open, so a batch kept before a restart is relayed
 * by the first sweep after it. A batch relayed twice (kept, relayed, and the process stopped before `relayed` was
 * written) is a repeat the bus's consumers and the audit log take as a no-op.
 *
 * A torn last line (the machine died mid-write) is ignored.
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import {
  createMemoryOutboxJournal,
  type KeptBatch,
  type OutboxJournal,
} from '../../shared/adapters/local/outbox-stream.ts';

type Line = ({ readonly t: 'kept' } & KeptBatch) | { readonly t: 'relayed'; readonly id: string };

export interface OutboxJournalFile extends OutboxJournal {
  close(): void;
}

/** Rewritten to what it holds once this many lines were appended (and more than four per batch kept). */
const COMPACT_AFTER = 1_000;

export function openOutboxJournal(path: string): OutboxJournalFile {
  const memory = createMemoryOutboxJournal();
  const apply = (line: Line): void => {
    if (line.t === 'kept') memory.keep({ id: line.id, records: line.records });
    else memory.relayed(line.id);
  };
  if (existsSync(path))
    for (const text of readFileSync(path, 'utf8').split('\n')) {
      if (text.trim() === '') continue;
      try {
        apply(JSON.parse(text) as Line);
      } catch {
        // A torn line: the write it belongs to never returned, so nothing relied on it.
      }
    }
  let fd = -1;
  let written = 0;
  const rewrite = (): void => {
    if (fd >= 0) closeSync(fd);
    const lines = memory.kept().map((batch): Line => ({ t: 'kept', ...batch }));
    writeFileSync(`${path}.tmp`, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    renameSync(`${path}.tmp`, path);
    fd = openSync(path, 'a');
    written = lines.length;
  };
  rewrite();
  const append = (line: Line): void => {
    apply(line);
    if (fd < 0) return;
    writeSync(fd, `${JSON.stringify(line)}\n`);
    written += 1;
    if (written > COMPACT_AFTER + 4 * memory.kept().length) rewrite();
  };
  return {
    kept: () => memory.kept(),
    keep: (batch) => append({ t: 'kept', ...batch }),
    relayed: (id) => {
      if (memory.kept().some((batch) => batch.id === id)) append({ t: 'relayed', id });
    },
    close() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
    },
  };
}
