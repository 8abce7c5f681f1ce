/**
 * Store behaviour: the steps of a run spread over partitions (its record's `stepShards`, chosen at its start) read
 * and write as one run's steps: listed in step order, fetched one, some or with the run, moved, with their attempts;
 * a run whose record names no count (one started before step partitions) reads as it always did.
 */
import { describe, expect, it } from 'vitest';
import type { RunRecord, Store } from '../../shared/ports/store.ts';
import { anAttempt, aRun, aStep, at, uniqueId } from './store-fixtures.ts';

const STEPS = Array.from({ length: 40 }, (_, i) => `s${String(i).padStart(2, '0')}`);

async function aStartedRun(store: Store, fields: Partial<RunRecord>): Promise<string> {
  const run = aRun({ status: 'running', revision: 1, startedAt: at(0), ...fields });
  await store.createRun(run);
  return run.runId;
}

export function describeStepPartitionBehaviour(store: () => Store): void {
  describe('steps of a run spread over partitions', () => {
    for (const [name, fields] of [
      ['16 partitions', { stepShards: 16 }],
      ['no count on its record (before step partitions)', {}],
    ] as const) {
      it(`reads and writes a run's steps and attempts as one run's, in step order, with ${name}`, async () => {
        const runId = await aStartedRun(store(), fields);
        // Put out of order: the listing's order is the steps', whatever partition each landed in.
        await store().putSteps([...STEPS].reverse().map((stepId) => aStep({ runId, stepId })));
        const carried = anAttempt({ runId, stepId: 's07', outcome: 'succeeded', finishedAt: at(2) });
        await store().transitionStep(
          runId,
          's07',
          { generation: 1, from: ['ready'] },
          { status: 'succeeded', attempts: 1, output: { n: 7 }, attemptRecord: carried },
        );
        await store().putAttempt(anAttempt({ runId, stepId: 's05', attempt: 1, outcome: 'failed' }));
        await store().putAttempt(anAttempt({ runId, stepId: 's05', attempt: 2 }));

        expect((await store().listSteps(runId)).map((s) => s.stepId)).toEqual(STEPS);
        const statuses = await store().listStepStatuses(runId);
        expect(statuses.map((s) => s.stepId)).toEqual(STEPS);
        expect(statuses.find((s) => s.stepId === 's07')?.status).toBe('succeeded');
        expect((await store().getSteps(runId, ['s31', 's02', 'zz'])).map((s) => s.stepId).sort()).toEqual([
          's02',
          's31',
        ]);
        expect(await store().getStep(runId, 's07')).toMatchObject({ status: 'succeeded', output: { n: 7 } });

        const found = await store().getStepWithRun(runId, 's05', { generation: 1, attempt: 2 }, ['s07', 's30']);
        expect(found.run?.runId).toBe(runId);
        expect(found.step?.stepId).toBe('s05');
        expect(found.attempt).toMatchObject({ stepId: 's05', attempt: 2 });
        expect(found.others?.map((s) => s.stepId).sort()).toEqual(['s07', 's30']);
        expect(await store().getAttempt(runId, 's07', { generation: 1, attempt: 1 })).toMatchObject({
          outcome: 'succeeded',
        });

        const attempts = await store().listAttempts(runId);
        expect(attempts.map((a) => `${a.stepId}/${a.attempt}`)).toEqual(['s05/1', 's05/2', 's07/1']);
        expect((await store().listAttempts(runId, 's05')).map((a) => a.attempt)).toEqual([1, 2]);
      });
    }

    it('keeps two runs of many partitions apart', async () => {
      const one = await aStartedRun(store(), { stepShards: 8 });
      const two = await aStartedRun(store(), { stepShards: 8 });
      await store().putSteps(STEPS.slice(0, 10).map((stepId) => aStep({ runId: one, stepId })));
      await store().putSteps(STEPS.slice(10, 12).map((stepId) => aStep({ runId: two, stepId })));
      expect((await store().listSteps(two)).map((s) => s.stepId)).toEqual(['s10', 's11']);
      expect(await store().listSteps(uniqueId('run'))).toEqual([]);
    });
  });
}
