/**
 * Store behaviour for replanning and invalidation: a step record's stale upstream generations, watchers of outside
 * resources and a reopened run.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../shared/ports/store.ts';
import { aRun, aStep, at, uniqueId } from './store-fixtures.ts';

export function describeGenerationBehaviour(store: () => Store): void {
  describe('step records', () => {
    it('keeps the stale upstream generations a first record is put with', async () => {
      const step = aStep({ status: 'pending', upstream: ['a'], remaining: 1, released: [], staleReleases: { a: 2 } });
      await store().putSteps([step]);
      expect(await store().getStep(step.runId, step.stepId)).toMatchObject({ staleReleases: { a: 2 } });
    });
  });

  describe('watchers', () => {
    it('lists every run step watching a resource, once each however often it was written', async () => {
      const key = uniqueId('repo:main');
      await store().putWatches('default', 'run-1', [
        { stepId: 'a', resourceKey: key },
        { stepId: 'b', resourceKey: key },
        { stepId: 'a', resourceKey: `${key}-other` },
      ]);
      await store().putWatches('default', 'run-1', [{ stepId: 'a', resourceKey: key }]);
      await store().putWatches('default', 'run-2', [{ stepId: 'a', resourceKey: key }]);
      const watchers = await store().listWatchers('default', key);
      const sorted = [...watchers].sort((x, y) => `${x.runId}${x.stepId}`.localeCompare(`${y.runId}${y.stepId}`));
      expect(sorted).toEqual([
        { runId: 'run-1', stepId: 'a' },
        { runId: 'run-1', stepId: 'b' },
        { runId: 'run-2', stepId: 'a' },
      ]);
      expect(await store().listWatchers('default', `${key}-other`)).toEqual([{ runId: 'run-1', stepId: 'a' }]);
      expect(await store().listWatchers('default', `${key}-none`)).toEqual([]);
    });

    it('accepts an empty list of watches', async () => {
      await store().putWatches('default', 'run-3', []);
      expect(await store().listWatchers('default', 'anything')).toEqual([]);
    });
  });

  describe('reopening', () => {
    it('reopens a finished run: terminal and waiter dropped, earlier terminals and the count kept', async () => {
      const terminal = { state: 'complete', reason: 'done', evidence: { n: 1 }, at: at(5) } as const;
      const run = aRun({ status: 'complete', revision: 1, terminal, waiterToken: 'token-old' });
      await store().createRun(run);
      const reopened = await store().updateRun(
        run.runId,
        ['complete'],
        { status: 'running', reopened: 1, previousTerminals: [terminal] },
        { remove: ['terminal', 'waiterToken'] },
      );
      expect(reopened).toMatchObject({ status: 'running', reopened: 1, previousTerminals: [terminal] });
      expect(reopened).not.toHaveProperty('terminal');
      expect(reopened).not.toHaveProperty('waiterToken');
      expect(await store().getRun(run.runId)).toEqual(reopened);
    });
  });
}
