/**
 * Store behaviour for replanning and invalidation: a step's next generation (one winner, the ended one kept in
 * history, attempts untouched), watchers of outside resources, the run's once-only sets and a reopened run.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../shared/ports/store.ts';
import { anAttempt, aRun, aStep, at, payloadOf, uniqueId } from './store-fixtures.ts';

const NEXT = { status: 'pending', upstream: ['a', 'b'], remaining: 1, released: ['a'] } as const;

export function describeGenerationBehaviour(store: () => Store): void {
  describe('generations', () => {
    it("appends the new generation's trace entries (a revision's [plan] entry) to the step's trace", async () => {
      const runId = uniqueId('run');
      const trace = [{ kind: 'fail', at: at(1), text: 'provider down' }] as const;
      await store().putSteps([aStep({ runId, stepId: 'c', status: 'failed', trace: [...trace] })]);
      const planned = { kind: 'plan', at: at(2), text: 'C → tool:x (revision 2). Why: swapped' } as const;
      const next = await store().startGeneration(runId, 'c', 1, { ...NEXT, appendTrace: [planned] });
      expect(next?.trace).toEqual([...trace, planned]);
      expect((await store().getStep(runId, 'c'))?.trace).toEqual([...trace, planned]);
    });

    it('starts the next generation with the given counts and the ended one appended to history', async () => {
      const runId = uniqueId('run');
      const step = aStep({
        runId,
        stepId: 'c',
        status: 'succeeded',
        upstream: ['a'],
        remaining: 0,
        released: ['a'],
        attempts: 2,
        output: { n: 1 },
        error: null,
        confidence: 0.9,
        startedAt: at(1),
        finishedAt: at(2),
        claimedBy: 'exec-1',
        trace: [{ kind: 'judge', at: at(2), text: 'succeeded' }],
      });
      await store().putSteps([step]);
      const next = await store().startGeneration(runId, 'c', 1, NEXT);
      expect(next).toMatchObject({ generation: 2, status: 'pending', upstream: ['a', 'b'], remaining: 1 });
      expect(next?.released).toEqual(['a']);
      expect(next?.attempts).toBe(0);
      for (const field of ['claimedBy', 'output', 'error', 'confidence', 'startedAt', 'finishedAt'] as const)
        expect(next).not.toHaveProperty(field);
      expect(next?.trace).toEqual(step.trace);
      expect(next?.history).toEqual([
        {
          generation: 1,
          status: 'succeeded',
          output: { n: 1 },
          error: null,
          confidence: 0.9,
          startedAt: at(1),
          finishedAt: at(2),
        },
      ]);
      expect(await store().getStep(runId, 'c')).toEqual(next);
    });

    it('keeps every ended generation in order and an empty release list as none', async () => {
      const step = aStep({ status: 'failed', error: { code: 'E_X', message: 'x', retryable: false } });
      await store().putSteps([step]);
      await store().startGeneration(step.runId, step.stepId, 1, { ...NEXT, released: [] });
      const third = await store().startGeneration(step.runId, step.stepId, 2, {
        status: 'ready',
        upstream: [],
        remaining: 0,
        released: [],
      });
      expect(third).toMatchObject({ generation: 3, status: 'ready', released: [] });
      expect(third?.history?.map((h) => [h.generation, h.status])).toEqual([
        [1, 'failed'],
        [2, 'pending'],
      ]);
    });

    it("keeps the key of the change that started a generation, and an in-flight ended generation's claimant", async () => {
      const step = aStep({ status: 'running', claimedBy: 'exec-1' });
      await store().putSteps([step]);
      const keyed = await store().startGeneration(step.runId, step.stepId, 1, { ...NEXT, key: 'invalidation#e1' });
      expect(keyed).toMatchObject({ generation: 2, generationKey: 'invalidation#e1' });
      expect(keyed?.history).toEqual([{ generation: 1, status: 'running', claimedBy: 'exec-1' }]);
      // A generation started without a key does not inherit the one before's.
      const plain = await store().startGeneration(step.runId, step.stepId, 2, NEXT);
      expect(plain).not.toHaveProperty('generationKey');
      expect(await store().getStep(step.runId, step.stepId)).toEqual(plain);
    });

    it('keeps the claimant of a generation closed while claimed (cancelled), not of one that finished', async () => {
      const error = { code: 'E_CANCELLED', message: 'the run was cancelled', retryable: false };
      const closed = aStep({ status: 'cancelled', claimedBy: 'exec-1', error });
      const finished = aStep({ status: 'succeeded', claimedBy: 'exec-2' });
      await store().putSteps([closed, finished]);
      const next = await store().startGeneration(closed.runId, closed.stepId, 1, NEXT);
      expect(next?.history).toEqual([{ generation: 1, status: 'cancelled', error, claimedBy: 'exec-1' }]);
      const after = await store().startGeneration(finished.runId, finished.stepId, 1, NEXT);
      expect(after?.history?.[0]).not.toHaveProperty('claimedBy');
    });

    it('refuses a release from an upstream generation the next one names stale, and counts a later one', async () => {
      const step = aStep({ status: 'succeeded', upstream: ['a', 'b'], remaining: 0, released: ['a', 'b'] });
      await store().putSteps([step]);
      // a and b start their next generation with this step: a from generation 1, b from generation 3.
      const next = {
        status: 'pending',
        upstream: ['a', 'b'],
        remaining: 2,
        released: [],
        staleReleases: { a: 1, b: 3 },
      } as const;
      await store().startGeneration(step.runId, step.stepId, 1, next);
      const { runId, stepId } = step;
      // a's generation 1 finished before it was invalidated and its release came late; b's generation 2 even later.
      expect(await store().releaseLastDependency(runId, stepId, 2, 'a', 1)).toBeUndefined();
      expect(await store().releaseDependency(runId, stepId, 2, 'a', 1)).toBeUndefined();
      expect(await store().releaseDependency(runId, stepId, 2, 'b', 2)).toBeUndefined();
      expect(await store().getStep(runId, stepId)).toMatchObject({ generation: 2, remaining: 2, released: [] });
      // Their next generations count (as does a release that does not say its generation).
      expect(await store().releaseDependency(runId, stepId, 2, 'a', 2)).toMatchObject({
        remaining: 1,
        released: ['a'],
      });
      expect(await store().releaseLastDependency(runId, stepId, 2, 'b')).toMatchObject({
        remaining: 0,
        status: 'ready',
      });
      // A generation started without stale upstream generations keeps none of the one before's.
      await store().startGeneration(runId, stepId, 2, { ...NEXT, upstream: ['a'], remaining: 1, released: [] });
      expect(await store().releaseLastDependency(runId, stepId, 3, 'a', 1)).toMatchObject({ status: 'ready' });
    });

    it('keeps the stale upstream generations a first record is put with, and refuses their releases', async () => {
      const step = aStep({ status: 'pending', upstream: ['a'], remaining: 1, released: [], staleReleases: { a: 2 } });
      await store().putSteps([step]);
      const { runId, stepId } = step;
      expect(await store().getStep(runId, stepId)).toMatchObject({ staleReleases: { a: 2 } });
      expect(await store().releaseLastDependency(runId, stepId, 1, 'a', 2)).toBeUndefined();
      expect(await store().releaseLastDependency(runId, stepId, 1, 'a', 3)).toMatchObject({ status: 'ready' });
    });

    it('lets exactly one of concurrent starters from the same generation win', async () => {
      const step = aStep({ status: 'succeeded', output: { v: 1 } });
      await store().putSteps([step]);
      const results = await Promise.all(
        Array.from({ length: 8 }, () => store().startGeneration(step.runId, step.stepId, 1, NEXT)),
      );
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      const stored = await store().getStep(step.runId, step.stepId);
      expect(stored?.generation).toBe(2);
      expect(stored?.history).toHaveLength(1);
    });

    it('refuses a start from another generation and for an unknown step', async () => {
      const step = aStep({ status: 'running', generation: 3 });
      await store().putSteps([step]);
      expect(await store().startGeneration(step.runId, step.stepId, 2, NEXT)).toBeUndefined();
      expect(await store().startGeneration(step.runId, 'ghost', 1, NEXT)).toBeUndefined();
      expect((await store().getStep(step.runId, step.stepId))?.generation).toBe(3);
    });

    it('makes a late result of the ended generation fail its generation condition', async () => {
      const step = aStep({ status: 'running', claimedBy: 'exec-old' });
      await store().putSteps([step]);
      await store().startGeneration(step.runId, step.stepId, 1, { ...NEXT, upstream: [], remaining: 0, released: [] });
      const late = await store().transitionStep(
        step.runId,
        step.stepId,
        { generation: 1, from: ['running'] },
        { status: 'succeeded', output: { stale: true } },
      );
      expect(late).toBeUndefined();
      expect(await store().getStep(step.runId, step.stepId)).toMatchObject({ generation: 2, status: 'pending' });
    });

    it('leaves the attempts of the ended generation in place', async () => {
      const step = aStep({ status: 'succeeded', stepId: 'gather' });
      const attempt = anAttempt({ runId: step.runId, stepId: 'gather', outcome: 'succeeded', output: { n: 1 } });
      await store().putSteps([step]);
      await store().putAttempt(attempt);
      await store().startGeneration(step.runId, 'gather', 1, NEXT);
      expect(await store().listAttempts(step.runId, 'gather')).toEqual([attempt]);
    });

    it('keeps a large ended output on its attempts only, not in the step history', async () => {
      const step = aStep({ status: 'succeeded', output: payloadOf(100_000) });
      await store().putSteps([step]);
      const next = await store().startGeneration(step.runId, step.stepId, 1, NEXT);
      expect(next?.history?.[0]).toMatchObject({ generation: 1, status: 'succeeded' });
      expect(next?.history?.[0]).not.toHaveProperty('output');
    });
  });

  describe('watchers', () => {
    it('lists every run step watching a resource, once each however often it was written', async () => {
      const key = uniqueId('repo:main');
      await store().putWatches('run-1', [
        { stepId: 'a', resourceKey: key },
        { stepId: 'b', resourceKey: key },
        { stepId: 'a', resourceKey: `${key}-other` },
      ]);
      await store().putWatches('run-1', [{ stepId: 'a', resourceKey: key }]);
      await store().putWatches('run-2', [{ stepId: 'a', resourceKey: key }]);
      const watchers = await store().listWatchers(key);
      const sorted = [...watchers].sort((x, y) => `${x.runId}${x.stepId}`.localeCompare(`${y.runId}${y.stepId}`));
      expect(sorted).toEqual([
        { runId: 'run-1', stepId: 'a' },
        { runId: 'run-1', stepId: 'b' },
        { runId: 'run-2', stepId: 'a' },
      ]);
      expect(await store().listWatchers(`${key}-other`)).toEqual([{ runId: 'run-1', stepId: 'a' }]);
      expect(await store().listWatchers(`${key}-none`)).toEqual([]);
    });

    it('accepts an empty list of watches', async () => {
      await store().putWatches('run-3', []);
      expect(await store().listWatchers('anything')).toEqual([]);
    });
  });

  describe('run sets and reopening', () => {
    it('tells only the first of repeated and concurrent markers that a member is new', async () => {
      const run = aRun({ status: 'running' });
      await store().createRun(run);
      const first = await Promise.all(
        Array.from({ length: 6 }, () => store().markRunOnce(run.runId, 'handledFailures', 'gather#1')),
      );
      expect(first.filter(Boolean)).toHaveLength(1);
      expect(await store().markRunOnce(run.runId, 'handledFailures', 'gather#1')).toBe(false);
      expect(await store().markRunOnce(run.runId, 'handledFailures', 'gather#2')).toBe(true);
      expect(await store().markRunOnce(run.runId, 'replanFingerprints', 'gather#1')).toBe(true);
      const stored = await store().getRun(run.runId);
      expect([...(stored?.handledFailures ?? [])].sort()).toEqual(['gather#1', 'gather#2']);
      expect(stored?.replanFingerprints).toEqual(['gather#1']);
    });

    it('takes a member back out, so the next marker is told it is new again', async () => {
      const run = aRun({ status: 'running' });
      await store().createRun(run);
      expect(await store().markRunOnce(run.runId, 'handledFailures', 'gather#1')).toBe(true);
      await store().unmarkRunOnce(run.runId, 'handledFailures', 'gather#1');
      await store().unmarkRunOnce(run.runId, 'handledFailures', 'never#1');
      expect(await store().markRunOnce(run.runId, 'handledFailures', 'gather#1')).toBe(true);
      await store().unmarkRunOnce('ghost', 'handledFailures', 'x#1');
      expect(await store().getRun('ghost')).toBeUndefined();
    });

    it('marks nothing on an unknown run', async () => {
      expect(await store().markRunOnce('ghost', 'handledFailures', 'x#1')).toBe(false);
      expect(await store().getRun('ghost')).toBeUndefined();
    });

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
