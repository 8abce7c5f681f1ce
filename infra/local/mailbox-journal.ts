/**
 * What SQS and EventBridge Scheduler keep durably and the embedded runtime would otherwise hold only in memory: the
 * runs' commands not yet decided (a letter posted to a mailbox, until its batch is committed) and the timers not yet
 * fired. An append-only file of JSON lines in the data directory, folded on boot: the letters are posted again, in
 * their order, and the timers armed again (one already due fires at once). A command decided twice is a repeat the
 * decider answers without deciding anything again, so a letter whose batch committed just before a crash is safe.
 *
 * Each record is one `write` to a file opened for appending; a torn last line (the machine died mid-write) is
 * ignored.
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import type { RunCommand, RunCommandInput } from '../../shared/engine/run/commands.ts';

export interface JournalLetter {
  readonly id: string;
  readonly runId: string;
  readonly command: RunCommandInput;
}

export interface JournalTimer {
  readonly key: string;
  readonly runId: string;
  readonly name: string;
  readonly at: string;
  readonly command: RunCommand;
}

type Record =
  | ({ readonly t: 'post' } & JournalLetter)
  | { readonly t: 'done'; readonly ids: readonly string[] }
  | ({ readonly t: 'timer' } & JournalTimer)
  | { readonly t: 'fired'; readonly key: string };

export interface MailboxJournal {
  /** The letters posted and not yet decided, in their order, and the timers not yet fired, when the journal was opened. */
  readonly recovered: { readonly letters: readonly JournalLetter[]; readonly timers: readonly JournalTimer[] };
  posted(letter: JournalLetter): void;
  done(ids: readonly string[]): void;
  scheduled(timer: JournalTimer): void;
  fired(key: string): void;
  close(): void;
}

const COMPACT_AFTER = 20_000;

export function openMailboxJournal(path: string): MailboxJournal {
  const letters = new Map<string, JournalLetter>();
  const timers = new Map<string, JournalTimer>();
  const apply = (record: Record): void => {
    if (record.t === 'post') letters.set(record.id, { id: record.id, runId: record.runId, command: record.command });
    else if (record.t === 'done') for (const id of record.ids) letters.delete(id);
    else if (record.t === 'timer') {
      const { t: _t, ...timer } = record;
      timers.set(record.key, timer);
    } else timers.delete(record.key);
  };
  if (existsSync(path))
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      try {
        apply(JSON.parse(line) as Record);
      } catch {
        // A torn line: the write it belongs to never returned, so nothing relied on it.
      }
    }
  const recovered = { letters: [...letters.values()], timers: [...timers.values()] };
  let fd = -1;
  let written = 0;
  const rewrite = (): void => {
    if (fd >= 0) closeSync(fd);
    const records: Record[] = [
      ...[...letters.values()].map((l): Record => ({ t: 'post', ...l })),
      ...[...timers.values()].map((t): Record => ({ t: 'timer', ...t })),
    ];
    writeFileSync(`${path}.tmp`, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    renameSync(`${path}.tmp`, path);
    fd = openSync(path, 'a');
    written = records.length;
  };
  rewrite();
  const append = (record: Record): void => {
    if (fd < 0) return;
    writeSync(fd, `${JSON.stringify(record)}\n`);
    apply(record);
    written += 1;
    if (written > COMPACT_AFTER + 4 * (letters.size + timers.size)) rewrite();
  };
  return {
    recovered,
    posted: (letter) => append({ t: 'post', ...letter }),
    done: (ids) => {
      if (ids.length > 0) append({ t: 'done', ids });
    },
    scheduled: (timer) => append({ t: 'timer', ...timer }),
    fired: (key) => append({ t: 'fired', key }),
    close() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
    },
  };
}
