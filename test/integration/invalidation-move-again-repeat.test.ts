/**
 * Two invalidations of one run that overlap, the second of them failing part-way through moving steps once more,
 * through the embedded stack's real machines (chaos seed 11 run 81, seed 14 run 166: an API invalidation and a
 * webhook's of one run; a step stayed `pending` in its latest generation although its upstream steps had all
 * succeeded in theirs, and the run stayed `running`).
 *
 * The invalidation of a reads the steps while the invalidation of b is moving them: it loses b to it, moves c and d
 * itself, then moves b, c and d once more (b's generation counted a's superseded result; see `movesAgain`). Its move
 * of c fails (a throttle) after d's landed: d's generation waits for c's next generation, which never came. Its
 * repeat took c's generation and d's as its own, moved and consistent, and started a: c ran, and its release was
 * refused by d for good.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { StepRecord } from '../../shared/ports/store.ts';
import { executedGenerations, plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

const echo = (id: string, dependsOn: string[] = []) => step(stack, id, T.echo, { input: { value: id }, dependsOn });

const invalidate = (runId: string, stepId: string) =>
  stack.request('POST', `/runs/${runId}/steps/${stepId}/invalidate`, { reason: `${stepId} changed` });

/** Polls the store (not through the faults) until the step is in `generation`. */
async function inGeneration(runId: string, stepId: string, generation: number): Promise<StepRecord> {
  for (let tries = 0; tries < 800; tries++) {
    const record = await faults.raw().getStep(runId, stepId);
    if (record !== undefined && record.generation >= generation) return record;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`step ${stepId} of run ${runId} never reached generation ${generation}`);
}

/** Holds the next move of `stepId` (a `startGeneration` from any generation). */
const holdMove = (runId: string, stepId: string) =>
  faults.hold({ method: 'startGeneration', match: (call) => call.runId === runId && call.args[1] === stepId });

describe('an invalidation whose second moves fail part-way, overlapping another one', () => {
  it('leaves no step of the scope waiting for a generation of its upstream step that never comes', async () => {
    const runId = await stack.startRun({
      plan: plan('move again fails part-way', [echo('a'), echo('b', ['a']), echo('c', ['b']), echo('d', ['c'])]),
    });
    expect((await waitForRun(stack, runId)).status).toBe('complete');

    // The invalidation of b moves c and d (to generation 2); its move of b is held.
    const ofBMovesB = holdMove(runId, 'b');
    const ofB = invalidate(runId, 'b');
    await ofBMovesB.arrived;
    await Promise.all([inGeneration(runId, 'c', 2), inGeneration(runId, 'd', 2)]);

    // The invalidation of a reads the steps now (b in generation 1) and moves c and d (to 3); a and b are held.
    const ofAMovesA = holdMove(runId, 'a');
    const ofAMovesB = holdMove(runId, 'b');
    const claimOfB2 = faults.hold({
      method: 'transitionStep',
      match: (call) =>
        call.runId === runId &&
        call.args[1] === 'b' &&
        (call.args[2] as { generation: number }).generation === 2 &&
        (call.args[3] as { status?: string }).status === 'running',
    });
    const ofA = invalidate(runId, 'a');
    await Promise.all([ofAMovesA.arrived, ofAMovesB.arrived]);
    await Promise.all([inGeneration(runId, 'c', 3), inGeneration(runId, 'd', 3)]);

    // b's invalidation moves b first and starts b's generation 2 (a had succeeded): its claim is held.
    ofBMovesB.release();
    expect((await ofB).json).toMatchObject({ stepIds: ['b', 'c', 'd'] });
    await claimOfB2.arrived;

    // a's invalidation lost b: it moves b, c and d once more. c's move fails (nothing written) once b's and d's landed.
    const landed = Promise.all([inGeneration(runId, 'b', 3), inGeneration(runId, 'd', 4)]);
    const throttled = faults.throwOn({
      method: 'startGeneration',
      when: 'before',
      match: (call) => call.runId === runId && call.args[1] === 'c' && call.args[2] === 3,
      until: landed,
    });
    ofAMovesA.release();
    ofAMovesB.release();
    expect((await ofA).status).toBe(202);
    expect(throttled.count()).toBe(1);
    claimOfB2.release();

    const done = await waitForRun(stack, runId, (r) => r.status !== 'running', 20_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    // Each step's latest generation ran once, and b's generation 2 (made from a's superseded result) never did.
    const executed = executedGenerations(stack, runId);
    for (const id of ['a', 'b', 'c', 'd']) {
      const latest = stepOf(done, id).generation ?? 0;
      expect(
        executed[id]?.filter((g) => g === latest),
        id,
      ).toEqual([latest]);
    }
    expect((await stack.store.listAttempts(runId)).filter((a) => a.stepId === 'b').map((a) => a.generation)).toEqual([
      1,
      stepOf(done, 'b').generation,
    ]);
  }, 60_000);
});
