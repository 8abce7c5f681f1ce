/**
 * Where a run's step items are (table-layout.ts): their partition depends on the run's `stepShards`, which its item
 * holds from the run's start on and which never changes after. So a process learns it once per run, from any run
 * record it reads or projects, and keeps it: every step key of that run is then spelt without a read. A process
 * that has not seen the run reads its item's count (consistently) before it reads or writes a step, or, where the
 * run item is read anyway (`getStepWithRun`), guesses the run's own partition and reads again if the run says
 * otherwise (a wide run, in a cold process: once).
 *
 * A run that has not started has no step, and its count is still to come: it is not remembered.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { RunRecord } from '../../ports/records/runs.ts';

/** Runs remembered per table (their counts are a few bytes each; the oldest is forgotten first). */
const REMEMBERED = 10_000;

export interface RunLayouts {
  /** Remembers a run's step partitions from its record (once it has started). */
  learn(run: Pick<RunRecord, 'runId' | 'startedAt' | 'stepShards'> | undefined): void;
  /** The run's step partitions when known here. */
  known(runId: string): number | undefined;
}

export function createRunLayouts(): RunLayouts {
  const shards = new Map<string, number>();
  return {
    learn(run) {
      if (run?.startedAt === undefined || shards.has(run.runId)) return;
      if (shards.size >= REMEMBERED) shards.delete(shards.keys().next().value ?? '');
      shards.set(run.runId, run.stepShards ?? 1);
    },
    known: (runId) => shards.get(runId),
  };
}

const byTable = new WeakMap<DynamoDBClient, Map<string, RunLayouts>>();

/** One memory per table and client: the store and the run log of one table share what they learn. */
export function runLayoutsOf(client: DynamoDBClient, tableName: string): RunLayouts {
  let tables = byTable.get(client);
  if (tables === undefined) {
    tables = new Map();
    byTable.set(client, tables);
  }
  let layouts = tables.get(tableName);
  if (layouts === undefined) {
    layouts = createRunLayouts();
    tables.set(tableName, layouts);
  }
  return layouts;
}
