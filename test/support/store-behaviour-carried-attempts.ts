/**
 * Store behaviour: an attempt record carried by the step transition that ends the attempt (StepPatch.attemptRecord),
 * read back exactly like a record of its own, once per generation, kept when the step starts its next generation.
 */
import { describe, expect, it } from 'vitest';
import { isValidationError } from '../../shared/errors.ts';
import type { AttemptRecord, StepRecord, Store } from '../../shared/ports/store.ts';
import { anAttempt, aStep, at, payloadOf, uniqueId } from './store-fixtures.ts';

const RUNNING = { generation: 1, from: ['running'] as const };

const finished = (step: StepRecord, overrides: Partial<AttemptRecord> = {}): AttemptRecord =>
  anAttempt({
    runId: step.runId,
    stepId: step.stepId,
    outcome: 'succeeded',
    finishedAt: at(2),
    output: { value: 1 },
    confidence: null,
    revision: 1,
    verdict: 'pass',
    evidence: { binding: 'builtin', verdict: 'pass' },
    ...overrides,
  });

export function describeCarriedAttemptBehaviour(store: () => Store): void {
  describe('attempts carried by a step transition', () => {
    async function runningStep(): Promise<StepRecord> {
      const step = aStep({ runId: uniqueId('run'), stepId: 'gather', status: 'running', attempts: 1 });
      await store().putSteps([step]);
      return step;
    }

    it('reads a carried attempt back through every attempt read, exactly as it was written', async () => {
      const step = await runningStep();
      const attempt = finished(step, { input: { value: 1 }, error: null });
      const moved = await store().transitionStep(step.runId, step.stepId, RUNNING, {
        status: 'succeeded',
        output: { value: 1 },
        attemptRecord: attempt,
      });
      expect(moved).toMatchObject({ status: 'succeeded', output: { value: 1 } });
      expect(moved).not.toHaveProperty('attemptRecord');
      expect(await store().getAttempt(step.runId, 'gather', { generation: 1, attempt: 1 })).toEqual(attempt);
      expect(await store().getAttempt(step.runId, 'gather', { generation: 1, attempt: 2 })).toBeUndefined();
      expect((await store().getStepWithRun(step.runId, 'gather', { generation: 1, attempt: 1 })).attempt).toEqual(
        attempt,
      );
      expect(await store().listAttempts(step.runId, 'gather')).toEqual([attempt]);
      expect(await store().listAttempts(step.runId)).toEqual([attempt]);
    });

    it('lists carried attempts among those recorded apart, in key order', async () => {
      const step = await runningStep();
      const other = aStep({ runId: step.runId, stepId: 'write', status: 'running', attempts: 2 });
      await store().putSteps([other]);
      const apart = anAttempt({ runId: step.runId, stepId: 'write', outcome: 'failed' });
      await store().putAttempt(apart);
      const carried = finished(other, { attempt: 2 });
      await store().transitionStep(
        step.runId,
        'write',
        { generation: 1, from: ['running'] },
        { status: 'succeeded', attemptRecord: carried },
      );
      const first = finished(step);
      await store().transitionStep(step.runId, 'gather', RUNNING, { status: 'succeeded', attemptRecord: first });
      expect(await store().listAttempts(step.runId)).toEqual([first, apart, carried]);
      expect(await store().listAttempts(step.runId, 'write')).toEqual([apart, carried]);
    });

    it('carries one attempt record per generation: a second carrying write is refused', async () => {
      const step = await runningStep();
      const attempt = finished(step);
      await store().transitionStep(step.runId, 'gather', RUNNING, { attemptRecord: attempt });
      const again = await store().transitionStep(step.runId, 'gather', RUNNING, {
        status: 'succeeded',
        attemptRecord: finished(step, { output: { value: 2 } }),
      });
      expect(again).toBeUndefined();
      expect(await store().getStep(step.runId, 'gather')).toMatchObject({ status: 'running' });
      expect(await store().listAttempts(step.runId, 'gather')).toEqual([attempt]);
    });

    it('returns the carried record over a record of the same attempt put apart', async () => {
      const step = await runningStep();
      const carried = finished(step);
      await store().putAttempt(anAttempt({ runId: step.runId, stepId: 'gather', outcome: 'failed' }));
      await store().transitionStep(step.runId, 'gather', RUNNING, { status: 'succeeded', attemptRecord: carried });
      expect(await store().getAttempt(step.runId, 'gather', { generation: 1, attempt: 1 })).toEqual(carried);
      expect(await store().listAttempts(step.runId, 'gather')).toEqual([carried]);
    });

    it('keeps what the attempt says where the step says otherwise (its output, its confidence)', async () => {
      const step = await runningStep();
      const attempt = finished(step, { output: { raw: true } });
      const { confidence: _none, ...unrated } = attempt;
      await store().transitionStep(step.runId, 'gather', RUNNING, {
        status: 'succeeded',
        output: { shaped: true },
        confidence: null,
        attemptRecord: unrated,
      });
      expect(await store().getAttempt(step.runId, 'gather', { generation: 1, attempt: 1 })).toEqual(unrated);
      expect(await store().getStep(step.runId, 'gather')).toMatchObject({ output: { shaped: true }, confidence: null });
    });

    it('refuses to carry an attempt of another step or generation', async () => {
      const step = await runningStep();
      const stray = [finished(step, { stepId: 'other' }), finished(step, { generation: 2 })];
      for (const attemptRecord of stray) {
        const error = await store()
          .transitionStep(step.runId, 'gather', RUNNING, { status: 'succeeded', attemptRecord })
          .catch((e: unknown) => e);
        expect(isValidationError(error)).toBe(true);
      }
      expect((await store().getStep(step.runId, 'gather'))?.status).toBe('running');
    });

    it('keeps a large carried attempt whole', async () => {
      const step = await runningStep();
      const attempt = finished(step, { output: payloadOf(100_000) });
      await store().transitionStep(step.runId, 'gather', RUNNING, { status: 'succeeded', attemptRecord: attempt });
      expect(await store().getAttempt(step.runId, 'gather', { generation: 1, attempt: 1 })).toEqual(attempt);
    });
  });
}
