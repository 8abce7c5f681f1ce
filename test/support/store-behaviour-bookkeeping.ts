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

  describe('releasing the last edge', () => {
    it('counts the last edge and moves the step to ready in one write', async () => {
      const child = aStep({ upstream: ['left'] });
      await store().putSteps([child]);
      const released = await store().releaseLastDependency(child.runId, child.stepId, 1, 'left');
      expect(released).toMatchObject({ status: 'ready', remaining: 0, released: ['left'] });
      expect(await store().getStep(child.runId, child.stepId)).toEqual(released);
    });

    it('refuses an edge that is not the last one, was counted before, or belongs to another generation', async () => {
      const child = aStep({ upstream: ['left', 'right'] });
      await store().putSteps([child]);
      const { runId, stepId } = child;
      expect(await store().releaseLastDependency(runId, stepId, 1, 'left')).toBeUndefined();
      expect(await store().getStep(runId, stepId)).toMatchObject({ status: 'pending', remaining: 2, released: [] });
      await store().releaseDependency(runId, stepId, 1, 'left');
      expect(await store().releaseLastDependency(runId, stepId, 1, 'left')).toBeUndefined();
      expect(await store().releaseLastDependency(runId, stepId, 2, 'right')).toBeUndefined();
      expect(await store().releaseLastDependency(runId, 'ghost', 1, 'right')).toBeUndefined();
      expect(await store().releaseLastDependency(runId, stepId, 1, 'right')).toMatchObject({
        status: 'ready',
        remaining: 0,
      });
    });

    it('counts the edge only once when the same parent releases twice concurrently', async () => {
      const child = aStep({ upstream: ['left'] });
      await store().putSteps([child]);
      const results = await Promise.all(
        [1, 2, 3].map(() => store().releaseLastDependency(child.runId, child.stepId, 1, 'left')),
      );
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      expect(await store().getStep(child.runId, child.stepId)).toMatchObject({ remaining: 0, status: 'ready' });
    });

    it('counts a step that is no longer pending only through the plain release', async () => {
      const child = aStep({ upstream: ['left'], status: 'blocked' });
      await store().putSteps([child]);
      expect(await store().releaseLastDependency(child.runId, child.stepId, 1, 'left')).toBeUndefined();
      expect(await store().releaseDependency(child.runId, child.stepId, 1, 'left')).toMatchObject({
        status: 'blocked',
        remaining: 0,
      });
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
