/**
 * A step's release of its dependent that arrives after an invalidation moved both of them to their next generation
 * (the RunStep that finished just before the invalidation was slowed by the store: a throttle retried, a held
 * write). The release of the ended generation must not count in the dependent's new one: the dependent waits for
 * its upstream step's next generation. Before, the late release found the dependent in generation 2, counted the
 * ended generation there and started it while its upstream step was still pending (the chaos suite's "succeeded
 * though its upstream never released it", seed 14 run 101). Likewise once a later invalidation of the dependent
 * alone moved it again: its upstream step, outside that scope and not finished, is waited for in its current
 * generation.
 *
 * The other way round: a step of the scope whose next generation ran before its dependent had moved (an upstream
 * step outside the scope finished and released it meanwhile) released the dependent's old generation; the
 * dependent's new one must still count it, else it waits for good and the run stays open.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { lateReleaseAfterInvalidation } from '../support/late-release.ts';
import {
  executedGenerations,
  executionEnded,
  plan,
  step,
  stepOf,
  summary,
  waitForRun,
} from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

const echo = (id: string, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

describe('a release that comes after an invalidation moved both ends of its edge', () => {
  it('is not counted in the new generation: the dependent waits for its upstream step to run again', async () => {
    // b finished generation 1 with its release of c held; a's generation 2 is held at its claim, so b and c wait.
    const { runId, late, claimOfA } = await lateReleaseAfterInvalidation(
      stack,
      faults,
      'late release across an invalidation',
    );

    late.release();
    await executionEnded(stack, `${runId}-b-g1`);
    const c = await faults.raw().getStep(runId, 'c');
    expect(c).toMatchObject({ generation: 2, status: 'pending', remaining: 1 });
    expect(executedGenerations(stack, runId).c).toBeUndefined();

    claimOfA.release();
    const done = await waitForRun(stack, runId, undefined, 30_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}`)).toEqual(['a2', 'b2', 'c2']);
    expect(executedGenerations(stack, runId)).toEqual({ a: [1, 2], b: [1, 2], c: [2] });
    // c ran after b's generation 2 had finished.
    expect(Date.parse(stepOf(done, 'c').startedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(stepOf(done, 'b').finishedAt ?? ''),
    );
  }, 60_000);

  it('is not counted either once a later invalidation of the dependent alone moved it again', async () => {
    const { runId, late, claimOfA } = await lateReleaseAfterInvalidation(
      stack,
      faults,
      'late release across two invalidations',
    );
    // c alone moves once more (to 3), while b waits in its generation 2: b is outside this scope, and not finished.
    const again = await stack.request('POST', `/runs/${runId}/steps/c/invalidate`, { reason: 'changed too' });
    expect(again.json).toMatchObject({ stepIds: ['c'] });

    late.release();
    await executionEnded(stack, `${runId}-b-g1`);
    // Before, c's generation 3 named no generation of b stale: it counted b's generation 1 and ran at once.
    expect(await faults.raw().getStep(runId, 'c')).toMatchObject({ generation: 3, status: 'pending', remaining: 1 });
    expect(executedGenerations(stack, runId).c).toBeUndefined();

    claimOfA.release();
    const done = await waitForRun(stack, runId, undefined, 30_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}`)).toEqual(['a2', 'b2', 'c3']);
    expect(executedGenerations(stack, runId)).toEqual({ a: [1, 2], b: [1, 2], c: [3] });
    expect(Date.parse(stepOf(done, 'c').startedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(stepOf(done, 'b').finishedAt ?? ''),
    );
  }, 60_000);
});

describe('a step of the scope whose next generation ran before its dependent moved', () => {
  it("is counted in the dependent's next generation, and the run finishes", async () => {
    const objective = 'scope step ran before its dependent moved';
    // x's success is held: the invalidation reads it running, so u's generation 2 waits for it.
    const successOfX = faults.hold({
      method: 'transitionStep',
      match: (call) =>
        call.runId === faults.runIdFor(objective) &&
        call.args[1] === 'x' &&
        (call.args[3] as { status?: string }).status === 'succeeded',
    });
    const runId = await stack.startRun({
      plan: plan(objective, [echo('x'), echo('u', { dependsOn: ['x'] }), echo('d', { dependsOn: ['u'] })]),
    });
    await successOfX.arrived;
    // d's next generation is held until u's has run.
    const moveOfD = faults.hold({
      method: 'startGeneration',
      match: (call) => call.runId === runId && call.args[1] === 'd',
    });
    const invalidated = stack.request('POST', `/runs/${runId}/steps/u/invalidate`, { reason: 'changed' });
    await moveOfD.arrived;
    // x succeeds and releases u's generation 2, which runs and releases d's generation 1.
    successOfX.release();
    await executionEnded(stack, `${runId}-u-g2`);

    moveOfD.release();
    expect((await invalidated).status).toBe(202);
    const done = await waitForRun(stack, runId, undefined, 30_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}`)).toEqual(['x1', 'u2', 'd2']);
    expect(executedGenerations(stack, runId).d).toContain(2);
  }, 60_000);
});
