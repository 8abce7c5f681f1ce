/**
 * Store behaviour: step records, the exactly-once writes the scheduler rests on, attempts and the item size guard.
 */
import { describe, expect, it } from 'vitest';
import { isNotFoundError, isPayloadTooLargeError, isValidationError } from '../../shared/errors.ts';
import type { Store } from '../../shared/ports/store.ts';
import { anAttempt, aPlan, aStep, at, payloadOf, uniqueId } from './store-fixtures.ts';

const CLAIM = { generation: 1, from: ['ready', 'pending'] as const, unclaimed: true };

export function describeStepBehaviour(store: () => Store): void {
  describe('steps', () => {
    it('lists put steps and leaves an existing step alone on a repeated put', async () => {
      const runId = uniqueId('run');
      const a = aStep({ runId, stepId: 'a', output: { n: 1 }, error: null, confidence: null });
      const b = aStep({ runId, stepId: 'b', upstream: ['a'] });
      await store().putSteps([a, b]);
      await store().transitionStep(runId, 'a', CLAIM, { status: 'running', claimedBy: 'exec-1' });
      await store().putSteps([a, b]);
      const steps = await store().listSteps(runId);
      expect(steps.map((s) => s.stepId).sort()).toEqual(['a', 'b']);
      expect(steps.find((s) => s.stepId === 'a')?.status).toBe('running');
      expect(await store().getStep(runId, 'b')).toEqual(b);
      expect(await store().getStep(runId, 'zzz')).toBeUndefined();
    });

    it("lists every step's status alone, in the order of the steps, however large their values", async () => {
      const runId = uniqueId('run');
      const big = { text: 'x'.repeat(200_000) };
      await store().putSteps([
        aStep({ runId, stepId: 'b', status: 'succeeded', output: big }),
        aStep({ runId, stepId: 'a', status: 'awaiting_approval' }),
        aStep({ runId, stepId: 'c' }),
      ]);
      const listed = await store().listStepStatuses(runId);
      expect(listed).toEqual([
        { stepId: 'a', status: 'awaiting_approval' },
        { stepId: 'b', status: 'succeeded' },
        { stepId: 'c', status: 'ready' },
      ]);
      expect(await store().listStepStatuses(uniqueId('run'))).toEqual([]);
    });

    it('lets exactly one of 10 concurrent claimants move a step', async () => {
      const step = aStep();
      await store().putSteps([step]);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store().transitionStep(step.runId, step.stepId, CLAIM, {
            status: 'running',
            claimedBy: `exec-${i}`,
            startedAt: at(5),
          }),
        ),
      );
      const winners = results.filter((r) => r !== undefined);
      expect(winners).toHaveLength(1);
      const stored = await store().getStep(step.runId, step.stepId);
      expect(stored).toMatchObject({ status: 'running', claimedBy: winners[0]?.claimedBy, startedAt: at(5) });
    });

    it('refuses a transition from another generation, status or an existing claim', async () => {
      const step = aStep({ claimedBy: 'exec-0', status: 'ready' });
      await store().putSteps([step]);
      const { runId, stepId } = step;
      expect(await store().transitionStep(runId, stepId, { ...CLAIM, generation: 2 }, { status: 'running' })).toBe(
        undefined,
      );
      expect(
        await store().transitionStep(runId, stepId, { generation: 1, from: ['running'] }, { status: 'failed' }),
      ).toBe(undefined);
      expect(await store().transitionStep(runId, stepId, CLAIM, { status: 'running' })).toBeUndefined();
      expect(await store().transitionStep('ghost-run', stepId, CLAIM, { status: 'running' })).toBeUndefined();
      expect((await store().getStep(runId, stepId))?.status).toBe('ready');
    });

    it('applies every patch field and appends or replaces the trace', async () => {
      const step = aStep({ status: 'running', trace: [{ kind: 'plan', at: at(0), text: 'planned' }] });
      await store().putSteps([step]);
      const from = { generation: 1, from: ['running'] as const };
      const retried = await store().transitionStep(step.runId, step.stepId, from, {
        status: 'running',
        attempts: 2,
        error: { code: 'E_FLAKY', message: 'try again', retryable: true },
        appendTrace: [{ kind: 'fail', at: at(1), text: 'flaked' }],
      });
      expect(retried?.trace.map((t) => t.kind)).toEqual(['plan', 'fail']);
      const done = await store().transitionStep(step.runId, step.stepId, from, {
        status: 'succeeded',
        output: { report: 'done', figures: [1.5, 2] },
        error: null,
        confidence: 0.75,
        finishedAt: at(9),
        trace: [],
        appendTrace: [{ kind: 'judge', at: at(9), text: 'passed' }],
      });
      expect(done).toMatchObject({
        status: 'succeeded',
        attempts: 2,
        output: { report: 'done', figures: [1.5, 2] },
        error: null,
        confidence: 0.75,
        finishedAt: at(9),
        trace: [{ kind: 'judge', at: at(9), text: 'passed' }],
      });
      expect(await store().getStep(step.runId, step.stepId)).toEqual(done);
    });

    it('rejects a transition with no `from` status', async () => {
      const step = aStep();
      await store().putSteps([step]);
      const error = await store()
        .transitionStep(step.runId, step.stepId, { generation: 1, from: [] }, { status: 'running' })
        .catch((e: unknown) => e);
      expect(isValidationError(error)).toBe(true);
    });
  });

  describe('attempts', () => {
    it('stores each attempt number once and lists a step attempts in order', async () => {
      const runId = uniqueId('run');
      expect(await store().putAttempt(anAttempt({ runId, attempt: 2 }))).toBe(true);
      expect(await store().putAttempt(anAttempt({ runId, attempt: 1 }))).toBe(true);
      expect(await store().putAttempt(anAttempt({ runId, attempt: 1, target: 'tool:other' }))).toBe(false);
      await store().putAttempt(anAttempt({ runId, stepId: 'gather.more', attempt: 1 }));
      await store().putAttempt(anAttempt({ runId, generation: 2, attempt: 1 }));
      const listed = await store().listAttempts(runId, 'gather');
      expect(listed.map((a) => [a.generation, a.attempt, a.target])).toEqual([
        [1, 1, 'tool:conformance.echo'],
        [1, 2, 'tool:conformance.echo'],
        [2, 1, 'tool:conformance.echo'],
      ]);
      expect(await store().listAttempts(runId)).toHaveLength(4);
    });

    it('updates an existing attempt and refuses to update a missing one', async () => {
      const attempt = anAttempt({ runId: uniqueId('run') });
      await store().putAttempt(attempt);
      const finished = { ...attempt, outcome: 'succeeded' as const, output: { value: 1 }, finishedAt: at(3) };
      await store().updateAttempt(finished);
      expect(await store().listAttempts(attempt.runId, attempt.stepId)).toEqual([finished]);
      const error = await store()
        .updateAttempt({ ...attempt, attempt: 9 })
        .catch((e: unknown) => e);
      expect(isNotFoundError(error)).toBe(true);
    });
  });

  describe('item size guard', () => {
    const TOO_LARGE = 360 * 1024;
    const expectTooLarge = async (write: Promise<unknown>) => {
      const error = await write.catch((e: unknown) => e);
      expect(isPayloadTooLargeError(error)).toBe(true);
      expect((error as { retryable: boolean }).retryable).toBe(false);
    };

    it('stores an output larger than an item out of line and reads it back whole', async () => {
      const step = aStep({ status: 'running' });
      await store().putSteps([step]);
      const from = { generation: 1, from: ['running'] as const };
      const output = payloadOf(TOO_LARGE);
      await store().transitionStep(step.runId, step.stepId, from, { status: 'succeeded', output });
      expect((await store().getStep(step.runId, step.stepId))?.output).toEqual(output);
      expect((await store().listSteps(step.runId))[0]?.output).toEqual(output);
      expect((await store().getSteps(step.runId, [step.stepId]))[0]?.output).toEqual(output);
    });

    it('stores a large output that fits', async () => {
      const step = aStep({ status: 'running' });
      await store().putSteps([step]);
      const output = payloadOf(300 * 1024);
      const from = { generation: 1, from: ['running'] as const };
      await store().transitionStep(step.runId, step.stepId, from, { status: 'succeeded', output });
      expect((await store().getStep(step.runId, step.stepId))?.output).toEqual(output);
    });

    it('refuses an update that would grow a stored item past the limit', async () => {
      // A trace is a list inside the item (only long strings move out of line): it can grow the item too far.
      const trace = [{ kind: 'exec' as const, at: at(0), text: 'x'.repeat(250 * 1024) }];
      const step = aStep({ status: 'running', trace });
      await store().putSteps([step]);
      const from = { generation: 1, from: ['running'] as const };
      const appendTrace = [{ kind: 'exec' as const, at: at(1), text: 'y'.repeat(200 * 1024) }];
      await expectTooLarge(store().transitionStep(step.runId, step.stepId, from, { appendTrace }));
    });

    it('stores an attempt output and a plan revision larger than an item, and reads them back whole', async () => {
      const attempt = anAttempt({ output: payloadOf(TOO_LARGE) });
      expect(await store().putAttempt(attempt)).toBe(true);
      expect(await store().getAttempt(attempt.runId, attempt.stepId, attempt)).toEqual(attempt);
      const base = aPlan();
      const plan = { ...base, steps: base.steps.map((step) => ({ ...step, input: payloadOf(TOO_LARGE) })) };
      const runId = uniqueId('run');
      await store().putPlanRevision(runId, plan, 'initial');
      // The latest revision is queried, not taken from the process's cache of revisions it wrote.
      expect((await store().getPlanRevision(runId))?.plan).toEqual(plan);
      expect(await store().listPlanRevisions(runId)).toEqual([
        expect.objectContaining({ revision: plan.revision, reason: 'initial' }),
      ]);
    });
  });
}
