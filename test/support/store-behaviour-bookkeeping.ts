/**
 * Store behaviour: the reads that bundle what a step action needs, the release that also readies a step, the
 * completion bookkeeping and the run record shedding its plan copies.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../shared/ports/store.ts';
import { anAttempt, aPlan, aRun, aStep, uniqueId } from './store-fixtures.ts';

export function describeBookkeepingBehaviour(store: () => Store): void {
  describe('bundled reads', () => {
    it('reads the run, a step and one of its attempts together, each exactly as written', async () => {
      const run = aRun({ status: 'running', revision: 1 });
      const step = aStep({ runId: run.runId, stepId: 'gather', output: { n: 1 }, error: null, confidence: 0.5 });
      const attempt = anAttempt({ runId: run.runId, stepId: 'gather', generation: 1, attempt: 2 });
      await store().createRun(run);
      await store().putSteps([step]);
      await store().putAttempt(anAttempt({ runId: run.runId, stepId: 'gather', attempt: 1 }));
      await store().putAttempt(attempt);
      expect(await store().getStepWithRun(run.runId, 'gather', { generation: 1, attempt: 2 })).toEqual({
        run,
        step,
        attempt,
      });
      expect(await store().getStepWithRun(run.runId, 'gather')).toEqual({ run, step });
      expect(await store().getAttempt(run.runId, 'gather', { generation: 1, attempt: 2 })).toEqual(attempt);
    });

    it('reads other steps of the run along with the step, leaving out the unknown ones', async () => {
      const run = aRun({ status: 'running', revision: 1 });
      const [a, b, c] = ['a', 'b', 'c'].map((stepId) => aStep({ runId: run.runId, stepId, output: { stepId } }));
      await store().createRun(run);
      await store().putSteps([a, b, c].filter((s) => s !== undefined));
      const found = await store().getStepWithRun(run.runId, 'c', undefined, ['a', 'ghost', 'b', 'c']);
      expect(found.run).toEqual(run);
      expect(found.step).toEqual(c);
      expect([...(found.others ?? [])].sort((x, y) => x.stepId.localeCompare(y.stepId))).toEqual([a, b]);
      expect((await store().getStepWithRun(run.runId, 'c', undefined, [])).others).toEqual([]);
    });

    it('leaves out whatever does not exist', async () => {
      const run = aRun();
      await store().createRun(run);
      expect(await store().getStepWithRun(run.runId, 'ghost', { generation: 1, attempt: 1 })).toEqual({ run });
      expect(await store().getStepWithRun('ghost-run', 'ghost')).toEqual({});
      expect(await store().getAttempt(run.runId, 'ghost', { generation: 1, attempt: 1 })).toBeUndefined();
    });

    it('reads the steps asked for, however many, and none that were not asked for', async () => {
      const runId = uniqueId('run');
      const steps = Array.from({ length: 130 }, (_, i) => aStep({ runId, stepId: `s${i}` }));
      await store().putSteps(steps);
      const wanted = steps.filter((_, i) => i % 3 === 0).map((s) => s.stepId);
      const read = await store().getSteps(runId, [...wanted, 'ghost', wanted[0] as string]);
      expect(read.map((s) => s.stepId).sort()).toEqual([...wanted].sort());
      expect(read.find((s) => s.stepId === 's3')).toEqual(steps[3]);
      expect(await store().getSteps(runId, [])).toEqual([]);
    });
  });

  describe('the run record sheds its plan copies', () => {
    it('removes the named plan fields in the same conditional update, and only then', async () => {
      const plan = aPlan();
      const run = aRun({ submittedPlan: plan, candidatePlan: plan });
      await store().createRun(run);
      expect(
        await store().updateRun(run.runId, ['running'], { status: 'complete' }, { remove: ['candidatePlan'] }),
      ).toBeUndefined();
      expect((await store().getRun(run.runId))?.candidatePlan).toEqual(plan);
      const started = await store().updateRun(
        run.runId,
        ['planning'],
        { status: 'running', revision: 1 },
        { remove: ['submittedPlan', 'candidatePlan'] },
      );
      expect(started).toMatchObject({ status: 'running', revision: 1, objective: run.objective });
      expect(started).not.toHaveProperty('submittedPlan');
      expect(started).not.toHaveProperty('candidatePlan');
      expect(await store().getRun(run.runId)).toEqual(started);
    });
  });
}
