/**
 * What Step Functions keeps durably and the embedded runtime would otherwise hold only in memory: which executions
 * are open, the state each last entered (with its raw input), when a Wait in progress ends, and the task token a
 * callback Task handed out and waits on. It is an append-only file of JSON lines in the data directory, folded on
 * boot into the open executions, which the local executions then carry on from the state they were in
 * (local-executions.ts `resume`). Every Task the definitions call is idempotent, so entering a state again after a
 * crash is what a Step Functions retry of that state would do.
 *
 * Each record is one `write` to a file opened for appending: a `kill -9` cannot lose a write that returned (the
 * kernel has it). A torn last line (the machine itself died mid-write) is ignored.
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import type { MachineName } from '../../shared/ports/executions.ts';

export type JournalRecord =
  | { readonly t: 'start'; readonly machine: MachineName; readonly name: string; readonly input: unknown }
  | {
      readonly t: 'state';
      readonly key: string;
      readonly state: string;
      readonly seq: number;
      readonly input: unknown;
      /** Epoch ms at which a Wait state entered here ends (Seconds or SecondsPath waits). */
      readonly waitUntil?: number;
    }
  | {
      readonly t: 'parked';
      readonly key: string;
      readonly state: string;
      readonly seq: number;
      readonly token: string;
      /** Epoch ms at which the token times out. */
      readonly until: number;
    }
  | { readonly t: 'end'; readonly key: string };

export interface OpenExecution {
  readonly machine: MachineName;
  readonly name: string;
  /** The execution's own input (where it starts when no state was recorded yet). */
  readonly input: unknown;
  readonly last?: {
    readonly state: string;
    readonly seq: number;
    readonly input: unknown;
    readonly waitUntil?: number;
  };
  readonly parked?: { readonly state: string; readonly seq: number; readonly token: string; readonly until: number };
}

export interface ExecutionJournal {
  /** The executions that were open when the journal was last written (folded at open). */
  readonly recovered: readonly OpenExecution[];
  append(record: JournalRecord): void;
  close(): void;
}

export const executionKey = (machine: MachineName, name: string): string => `${machine}:${name}`;

/**
 * A step execution's input as the current definitions read it: one an older cairn journaled lacks `brief`, which
 * RunStep's payload names (JSONPath fails on a missing path), so it gets a null one (the step then reads its plan).
 */
function upgraded(machine: MachineName, input: unknown): unknown {
  const record = input as Record<string, unknown> | null;
  if (machine !== 'step' || typeof record !== 'object' || record === null || Array.isArray(record)) return input;
  return 'brief' in record ? input : { ...record, brief: null };
}

/** Applies one record to the open executions. */
export function applyRecord(open: Map<string, OpenExecution>, record: JournalRecord): void {
  if (record.t === 'start') {
    const key = executionKey(record.machine, record.name);
    const input = upgraded(record.machine, record.input);
    if (!open.has(key)) open.set(key, { machine: record.machine, name: record.name, input });
    return;
  }
  const current = open.get(record.key);
  if (!current) return;
  if (record.t === 'end') {
    open.delete(record.key);
  } else if (record.t === 'state') {
    const { state, seq, waitUntil } = record;
    const input = upgraded(current.machine, record.input);
    const { parked, ...rest } = current;
    open.set(record.key, {
      ...rest,
      last: { state, seq, input, ...(waitUntil === undefined ? {} : { waitUntil }) },
      // A token belongs to one entry of its state: a later entry leaves it behind.
      ...(parked && parked.seq === seq ? { parked } : {}),
    });
  } else {
    const { state, seq, token, until } = record;
    open.set(record.key, { ...current, parked: { state, seq, token, until } });
  }
}

/** Folds records into the open executions, in order. */
export function foldJournal(records: Iterable<JournalRecord>): Map<string, OpenExecution> {
  const open = new Map<string, OpenExecution>();
  for (const record of records) applyRecord(open, record);
  return open;
}

function parseLines(text: string): JournalRecord[] {
  const records: JournalRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line) as JournalRecord);
    } catch {
      // A torn line: the write it belongs to never returned, so nothing relied on it.
    }
  }
  return records;
}

/** The records that rebuild exactly `open`: the compacted journal. */
function recordsOf(open: ReadonlyMap<string, OpenExecution>): JournalRecord[] {
  const records: JournalRecord[] = [];
  for (const [key, execution] of open) {
    records.push({ t: 'start', machine: execution.machine, name: execution.name, input: execution.input });
    if (execution.last) records.push({ t: 'state', key, ...execution.last });
    if (execution.parked) records.push({ t: 'parked', key, ...execution.parked });
  }
  return records;
}

const lines = (records: readonly JournalRecord[]): string => records.map((r) => `${JSON.stringify(r)}\n`).join('');

/** Rewrites the file when it holds this many more records than the open executions need. */
const COMPACT_AFTER = 20_000;

/** Opens (or creates) the journal at `path`: folds what it holds, rewrites it compacted, and appends from there. */
export function openExecutionJournal(path: string): ExecutionJournal {
  const open = existsSync(path)
    ? foldJournal(parseLines(readFileSync(path, 'utf8')))
    : new Map<string, OpenExecution>();
  const recovered = [...open.values()];
  let written = 0;
  let fd = -1;
  const rewrite = (): void => {
    if (fd >= 0) closeSync(fd);
    const records = recordsOf(open);
    writeFileSync(`${path}.tmp`, lines(records));
    renameSync(`${path}.tmp`, path);
    fd = openSync(path, 'a');
    written = records.length;
  };
  rewrite();
  return {
    recovered,
    append(record) {
      if (fd < 0) return;
      writeSync(fd, `${JSON.stringify(record)}\n`);
      applyRecord(open, record);
      written += 1;
      if (written > COMPACT_AFTER + 4 * open.size) rewrite();
    },
    close() {
      if (fd >= 0) closeSync(fd);
      fd = -1;
    },
  };
}
