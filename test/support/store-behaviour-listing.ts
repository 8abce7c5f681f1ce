/**
 * The runs listing's behaviour (`Store.listRuns`), run against every adapter that lists runs: the DynamoDB one (in
 * the store behaviour suite) and the in-memory one. `moveTo` changes a stored run's status as that adapter's writers
 * do (the DynamoDB store's updateRun, the memory table's projection), so a listing by status is seen to follow it.
 */
import { describe, expect, it } from 'vitest';
import type { RunStatus } from '../../shared/plan/schema.ts';
import type { RunRecord, Store } from '../../shared/ports/store.ts';
import { aRun, at } from './store-fixtures.ts';

export type ListingStore = Pick<Store, 'createRun' | 'listRuns'>;

export interface ListingHarness {
  readonly store: () => ListingStore;
  readonly moveTo: (run: RunRecord, status: RunStatus) => Promise<void>;
}

const ids = (list: readonly { runId: string }[]): string[] => list.map((r) => r.runId);

export function describeRunListingBehaviour({ store, moveTo }: ListingHarness): void {
  describe('runs listing', () => {
    it('lists runs newest first, filtered by status and cut at the limit', async () => {
      const runs = [0, 1, 2, 3].map((i) =>
        aRun({ createdAt: at(i), updatedAt: at(i), status: i % 2 === 0 ? 'running' : 'complete' }),
      );
      for (const run of runs) await store().createRun(run);
      expect(ids(await store().listRuns())).toEqual(ids([...runs].reverse()));
      expect(ids(await store().listRuns({ limit: 2 }))).toEqual(ids([runs[3], runs[2]] as typeof runs));
      expect(ids(await store().listRuns({ status: 'running' }))).toEqual(ids([runs[2], runs[0]] as typeof runs));
      expect(ids(await store().listRuns({ status: 'complete', limit: 1 }))).toEqual([runs[3]?.runId]);
    });

    it('continues a listing of runs before a given run when paging', async () => {
      const runs = [0, 1, 2, 3, 4].map((i) =>
        aRun({ createdAt: at(i), updatedAt: at(i), status: i % 2 === 0 ? 'running' : 'complete' }),
      );
      for (const run of runs) await store().createRun(run);
      const first = await store().listRuns({ limit: 2 });
      expect(ids(first)).toEqual(ids([runs[4], runs[3]] as typeof runs));
      const last = first.at(-1) as (typeof runs)[number];
      const rest = await store().listRuns({ limit: 10, before: { createdAt: last.createdAt, runId: last.runId } });
      expect(ids(rest)).toEqual(ids([runs[2], runs[1], runs[0]] as typeof runs));
      const running = await store().listRuns({ status: 'running', limit: 1, before: { createdAt: at(4), runId: 'z' } });
      expect(ids(running)).toEqual([runs[4]?.runId]);
    });

    it('pages through every run of one status, in order, among many of others', async () => {
      // 24 runs over every index shard; every third one failed, the rest complete.
      const runs = Array.from({ length: 24 }, (_, i) =>
        aRun({ createdAt: at(i), updatedAt: at(i), status: i % 3 === 0 ? 'failed' : 'complete' }),
      );
      for (const run of runs) await store().createRun(run);
      const failed = runs.filter((run) => run.status === 'failed').reverse();
      const seen: RunRecord[] = [];
      for (let page = 0; page < 10; page++) {
        const last = seen.at(-1);
        const before = last === undefined ? {} : { before: { createdAt: last.createdAt, runId: last.runId } };
        const got = await store().listRuns({ status: 'failed', limit: 3, ...before });
        expect(got.every((run) => run.status === 'failed')).toBe(true);
        seen.push(...got);
        if (got.length < 3) break;
      }
      expect(ids(seen)).toEqual(ids(failed));
    });

    it('moves a run to the listing of its new status when its status changes', async () => {
      const run = aRun({ status: 'running', createdAt: at(1), updatedAt: at(1) });
      const other = aRun({ status: 'running', createdAt: at(2), updatedAt: at(2) });
      await store().createRun(run);
      await store().createRun(other);
      await moveTo(run, 'cancelled');
      expect(ids(await store().listRuns({ status: 'running' }))).toEqual([other.runId]);
      expect(ids(await store().listRuns({ status: 'cancelled' }))).toEqual([run.runId]);
      expect(ids(await store().listRuns())).toEqual([other.runId, run.runId]);
    });
  });
}
