/**
 * The Store port's behaviour suite: what every Store adapter must do, written against the port alone.
 * `describeStoreBehaviour(name, makeStore)` runs it; `makeStore` gives each test a fresh, empty store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isConflictError, isValidationError } from '../../shared/errors.ts';
import type { OutboxEntry } from '../../shared/events/outbox.ts';
import type { Store } from '../../shared/ports/store.ts';
import { describeAdmissionBehaviour } from './store-behaviour-admission.ts';
import { describeBookkeepingBehaviour } from './store-behaviour-bookkeeping.ts';
import { describeCarriedAttemptBehaviour } from './store-behaviour-carried-attempts.ts';
import { describeGateBehaviour } from './store-behaviour-gates.ts';
import { describeGenerationBehaviour } from './store-behaviour-generations.ts';
import { describeRunListingBehaviour } from './store-behaviour-listing.ts';
import { describeStepPartitionBehaviour } from './store-behaviour-step-partitions.ts';
import { describeStepBehaviour } from './store-behaviour-steps.ts';
import { aPlan, aRun, at, uniqueId } from './store-fixtures.ts';

export interface StoreHarness {
  readonly store: Store;
  stop(): Promise<void>;
}

export function describeStoreBehaviour(name: string, makeStore: () => Promise<StoreHarness>): void {
  describe(`Store behaviour: ${name}`, () => {
    let harness: StoreHarness | undefined;
    const store = (): Store => {
      if (harness === undefined) throw new Error('store used outside a test');
      return harness.store;
    };
    beforeEach(async () => {
      harness = await makeStore();
    });
    afterEach(async () => {
      await harness?.stop();
      harness = undefined;
    });

    describeRunBehaviour(store);
    describeRunListingBehaviour({
      store,
      moveTo: async (run, status) => {
        await store().updateRun(run.runId, [run.status], { status });
      },
    });
    describePlanBehaviour(store);
    describeEventBehaviour(store);
    describeStepBehaviour(store);
    describeStepPartitionBehaviour(store);
    describeGateBehaviour(store);
    describeBookkeepingBehaviour(store);
    describeGenerationBehaviour(store);
    describeCarriedAttemptBehaviour(store);
    describeAdmissionBehaviour(store);
  });
}

function describeRunBehaviour(store: () => Store): void {
  describe('runs', () => {
    it('returns a created run exactly as it was written', async () => {
      const run = aRun({
        status: 'failed',
        directTarget: 'tool:conformance.echo',
        submittedPlan: aPlan(),
        candidatePlan: { anything: [1, 2.5, null, 'x'] },
        idempotencyKey: 'key-1',
        waiterToken: 'token-1',
        terminal: { state: 'failed', reason: 'root cause', evidence: { failed: ['gather'] }, at: at(9) },
        revision: 1,
        replans: 2,
      });
      await store().createRun(run);
      expect(await store().getRun(run.runId)).toEqual(run);
    });

    it('returns undefined for an unknown run', async () => {
      expect(await store().getRun('no-such-run')).toBeUndefined();
    });

    it('refuses to create a run whose id exists with a ConflictError', async () => {
      const run = aRun();
      await store().createRun(run);
      const error = await store()
        .createRun({ ...run, objective: 'other' })
        .catch((e: unknown) => e);
      expect(isConflictError(error)).toBe(true);
      expect((await store().getRun(run.runId))?.objective).toBe(run.objective);
    });

    it('gives every concurrent claimant of a run key the winner runId and request hash', async () => {
      const key = uniqueId('idem');
      const candidates = Array.from({ length: 20 }, (_, i) => `run-${i}`);
      const claims = await Promise.all(
        candidates.map((runId) => store().claimRunKey('default', key, runId, `hash-${runId}`)),
      );
      const owners = claims.map((claim) => claim.runId);
      expect(new Set(owners).size).toBe(1);
      expect(candidates).toContain(owners[0]);
      expect(new Set(claims.map((claim) => claim.requestHash))).toEqual(new Set([`hash-${owners[0]}`]));
      expect(await store().claimRunKey('default', key, 'run-late', 'hash-late')).toEqual({
        runId: owners[0],
        requestHash: `hash-${owners[0]}`,
      });
    });

    it('updates a run only while its status is one of `from`', async () => {
      const run = aRun({ status: 'planning' });
      await store().createRun(run);
      const updated = await store().updateRun(run.runId, ['planning'], { status: 'running', revision: 1 });
      expect(updated).toMatchObject({ runId: run.runId, status: 'running', revision: 1, objective: run.objective });
      expect(updated?.updatedAt).not.toBe(run.updatedAt);

      const refused = await store().updateRun(run.runId, ['planning'], { status: 'failed' });
      expect(refused).toBeUndefined();
      expect((await store().getRun(run.runId))?.status).toBe('running');
    });

    it('does not create a run when updating an unknown one', async () => {
      expect(await store().updateRun('ghost', ['planning', 'running'], { status: 'cancelled' })).toBeUndefined();
      expect(await store().getRun('ghost')).toBeUndefined();
    });

    it('rejects an update with no `from` status instead of matching nothing silently', async () => {
      const run = aRun();
      await store().createRun(run);
      const error = await store()
        .updateRun(run.runId, [], { status: 'running' })
        .catch((e: unknown) => e);
      expect(isValidationError(error)).toBe(true);
    });
  });
}

function describePlanBehaviour(store: () => Store): void {
  describe('plan revisions', () => {
    it('stores immutable revisions and refuses a second put of the same revision', async () => {
      const plan = aPlan();
      await store().putPlanRevision('run-p', plan, 'initial');
      const error = await store()
        .putPlanRevision('run-p', { ...plan, objective: 'rewritten' }, 'again')
        .catch((e: unknown) => e);
      expect(isConflictError(error)).toBe(true);
      expect(await store().getPlanRevision('run-p', 1)).toMatchObject({ plan, reason: 'initial' });
    });

    it('returns the latest revision when none is named, and lists all in order', async () => {
      await store().putPlanRevision('run-q', aPlan(), 'initial');
      await store().putPlanRevision('run-q', aPlan({ revision: 2, objective: 'replanned' }), 'replan');
      expect((await store().getPlanRevision('run-q'))?.plan.objective).toBe('replanned');
      const list = await store().listPlanRevisions('run-q');
      expect(list.map((r) => [r.revision, r.reason])).toEqual([
        [1, 'initial'],
        [2, 'replan'],
      ]);
      expect(list[0]).not.toHaveProperty('plan');
    });

    it('returns undefined for a run without revisions', async () => {
      expect(await store().getPlanRevision('run-none')).toBeUndefined();
      expect(await store().listPlanRevisions('run-none')).toEqual([]);
    });
  });
}

function describeEventBehaviour(store: () => Store): void {
  describe('events', () => {
    const entry = (runId: string, id: string, second: number, types: string[]): OutboxEntry => ({
      id,
      runId,
      at: `2030-01-01T00:00:${String(second).padStart(2, '0')}.000Z`,
      events: types.map((type) => ({ type: type as OutboxEntry['events'][number]['type'], detail: { type } })),
    });

    it('lists recorded events in the order of their writes, with unique, increasing seq', async () => {
      const runId = uniqueId('run');
      await store().recordEvents([entry(runId, 'w2', 2, ['c']), entry(runId, 'w1', 1, ['a', 'b'])]);
      const listed = await store().listEvents(runId);
      expect(listed.map((e) => e.type)).toEqual(['a', 'b', 'c']);
      const seqs = listed.map((e) => e.seq);
      expect([...seqs].sort()).toEqual(seqs);
      expect(new Set(seqs).size).toBe(3);
    });

    it('records an entry delivered again only once', async () => {
      const runId = uniqueId('run');
      const once = entry(runId, 'w1', 1, ['a', 'b']);
      await Promise.all([store().recordEvents([once]), store().recordEvents([once]), store().recordEvents([once])]);
      expect((await store().listEvents(runId)).map((e) => e.type)).toEqual(['a', 'b']);
    });

    it('keeps every concurrently recorded event: writers share no counter', async () => {
      const runId = uniqueId('run');
      await Promise.all(
        Array.from({ length: 30 }, (_, i) => store().recordEvents([entry(runId, `w${i}`, 1, [`t${i}`])])),
      );
      const listed = await store().listEvents(runId);
      expect(listed).toHaveLength(30);
      expect(new Set(listed.map((e) => e.seq)).size).toBe(30);
    });

    it('returns only later events after a cursor, and refuses a cursor it never gave out', async () => {
      const runId = uniqueId('run');
      await store().recordEvents([entry(runId, 'w1', 1, ['a', 'b']), entry(runId, 'w2', 2, ['c'])]);
      const [, second] = await store().listEvents(runId);
      const later = await store().listEvents(runId, { after: second?.seq as string });
      expect(later.map((e) => e.type)).toEqual(['c']);
      await expect(store().listEvents(runId, { after: 'nope' })).rejects.toThrow(/cursor/);
    });

    it('pages events by limit, each page after the last seq of the one before', async () => {
      const runId = uniqueId('run');
      await store().recordEvents([entry(runId, 'w1', 1, ['a', 'b', 'c']), entry(runId, 'w2', 2, ['d', 'e'])]);
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 5; page++) {
        const events = await store().listEvents(runId, { limit: 2, ...(after === undefined ? {} : { after }) });
        seen.push(...events.map((e) => e.type));
        if (events.length < 2) break;
        after = events.at(-1)?.seq;
      }
      expect(seen).toEqual(['a', 'b', 'c', 'd', 'e']);
    });

    it('keys events by the batch that decided them, so a batch written late still lands after a cursor', async () => {
      const runId = uniqueId('run');
      // Batch 9's writer's clock is ahead of batch 10's, and batch 10's events are recorded first.
      const v9 = { ...entry(runId, `${runId}-v9`, 50, ['late-a', 'late-b']) };
      const v10 = { ...entry(runId, `${runId}-v10`, 1, ['next']) };
      await store().recordEvents([v9]);
      const [, tail] = await store().listEvents(runId);
      await store().recordEvents([v10]);
      const listed = await store().listEvents(runId);
      expect(listed.map((e) => e.type)).toEqual(['late-a', 'late-b', 'next']);
      expect(listed.map((e) => e.seq)).toEqual([
        `v${'9'.padStart(10, '0')}~0000`,
        `v${'9'.padStart(10, '0')}~0001`,
        `v${'10'.padStart(10, '0')}~0000`,
      ]);
      expect((await store().listEvents(runId, { after: tail?.seq as string })).map((e) => e.type)).toEqual(['next']);
    });

    it('lists events recorded under the clock keys before the versioned ones', async () => {
      const runId = uniqueId('run');
      await store().recordEvents([entry(runId, `${runId}-v3`, 1, ['versioned']), entry(runId, 'old', 59, ['clock'])]);
      const listed = await store().listEvents(runId);
      expect(listed.map((e) => e.type)).toEqual(['clock', 'versioned']);
      expect((await store().listEvents(runId, { after: listed[0]?.seq as string })).map((e) => e.type)).toEqual([
        'versioned',
      ]);
    });

    it("lists one step's events alone when asked, in order", async () => {
      const runId = uniqueId('run');
      const of = (id: string, stepId: string, type: string): OutboxEntry => ({
        id,
        runId,
        at: at(1),
        events: [{ type: type as OutboxEntry['events'][number]['type'], detail: { stepId, generation: 1 } }],
      });
      await store().recordEvents([
        of(`${runId}-v1`, 'a', 'StepStarted'),
        of(`${runId}-v2`, 'b', 'StepStarted'),
        of(`${runId}-v3`, 'a', 'StepSucceeded'),
      ]);
      const listed = await store().listEvents(runId, { stepId: 'a' });
      expect(listed.map((e) => [e.stepId, e.type])).toEqual([
        ['a', 'StepStarted'],
        ['a', 'StepSucceeded'],
      ]);
    });

    it('keeps step id and generation on an event', async () => {
      const runId = uniqueId('run');
      await store().recordEvents([
        { id: 'w', runId, at: at(1), events: [{ type: 'StepSucceeded', detail: { stepId: 'gather', generation: 2 } }] },
      ]);
      expect((await store().listEvents(runId))[0]).toMatchObject({ stepId: 'gather', generation: 2 });
    });

    it('announces once per entry id: the outbox item is written once', async () => {
      const runId = uniqueId('run');
      const announcement = entry(runId, 'solo', 1, ['StepsInvalidated']);
      await store().announce(announcement);
      await store().announce(announcement);
      // An announcement is not yet in the audit log: the relay records it when the stream delivers it.
      expect(await store().listEvents(runId)).toEqual([]);
    });
  });
}
