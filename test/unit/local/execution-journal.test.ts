import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { foldJournal, type JournalRecord, openExecutionJournal } from '../../../infra/local/execution-journal.ts';

const key = 'step:r-a-g1';
const start: JournalRecord = { t: 'start', machine: 'step', name: 'r-a-g1', input: { runId: 'r', brief: null } };

describe('foldJournal', () => {
  it('keeps the last state an open execution entered, with its input and the end of its wait', () => {
    const open = foldJournal([
      start,
      { t: 'state', key, state: 'RunStep', seq: 1, input: { n: 1, brief: null } },
      { t: 'state', key, state: 'Backoff', seq: 3, input: { n: 2, brief: null }, waitUntil: 5000 },
    ]);
    expect(open.get(key)).toEqual({
      machine: 'step',
      name: 'r-a-g1',
      input: { runId: 'r', brief: null },
      last: { state: 'Backoff', seq: 3, input: { n: 2, brief: null }, waitUntil: 5000 },
    });
  });

  it('gives a step execution an older cairn journaled the null brief its definition now reads, and no run execution', () => {
    const open = foldJournal([
      { t: 'start', machine: 'step', name: 'r-a-g1', input: { runId: 'r' } },
      { t: 'state', key, state: 'Backoff', seq: 3, input: { n: 2 } },
      { t: 'start', machine: 'run', name: 'run-r', input: { runId: 'r' } },
    ]);
    expect(open.get(key)).toMatchObject({ input: { runId: 'r', brief: null }, last: { input: { n: 2, brief: null } } });
    expect(open.get('run:run-r')?.input).toEqual({ runId: 'r' });
  });

  it('drops an execution that ended', () => {
    expect(foldJournal([start, { t: 'state', key, state: 'RunStep', seq: 1, input: {} }, { t: 'end', key }]).size).toBe(
      0,
    );
  });

  it('keeps a token for the entry it was handed out in and forgets it when the execution moves on', () => {
    const parked: JournalRecord = { t: 'parked', key, state: 'AwaitDecision', seq: 4, token: 'tk', until: 9 };
    const entered: JournalRecord = { t: 'state', key, state: 'AwaitDecision', seq: 4, input: {} };
    expect(foldJournal([start, entered, parked]).get(key)?.parked).toEqual({
      state: 'AwaitDecision',
      seq: 4,
      token: 'tk',
      until: 9,
    });
    const later: JournalRecord = { t: 'state', key, state: 'RunStep', seq: 5, input: {} };
    expect(foldJournal([start, entered, parked, later]).get(key)?.parked).toBeUndefined();
  });
});

describe('openExecutionJournal', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('recovers the open executions, ignores a torn last line and rewrites the file compacted', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cairn-journal-'));
    dirs.push(dir);
    const path = join(dir, 'executions.jsonl');
    const first = openExecutionJournal(path);
    expect(first.recovered).toEqual([]);
    first.append(start);
    first.append({ t: 'state', key, state: 'RunStep', seq: 1, input: {} });
    first.append({ t: 'start', machine: 'run', name: 'done', input: {} });
    first.append({ t: 'end', key: 'run:done' });
    first.close();
    appendFileSync(path, '{"t":"state","key":"step:r-a-g1","sta');

    const second = openExecutionJournal(path);
    expect(second.recovered.map((e) => [e.name, e.last?.state])).toEqual([['r-a-g1', 'RunStep']]);
    second.close();
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(2);
  });
});
