/**
 * A revision's restarted step whose upstream step is not finished, and is in a later generation than the one whose
 * release may still come (an invalidation moved it, and the RunStep of its ended generation was slowed by the store
 * on its way to the release). The restarted step must wait for the upstream's current generation: the late release
 * of the ended one counts nothing in the restarted generation, as in an invalidation's (invalidation-late-release).
 * Before, it counted it and started at once, while the upstream step waited in its generation 2.
 *
 * And a step the revision does not change, downstream of one it runs again, that had already counted the release of
 * the superseded generation: it starts a new generation too (as an invalidation's scope does), so it waits for the
 * upstream's next one. Before, it was kept, and ran from the superseded result once its other upstream released it.
 * The same keeps a failure's late follow-up from blocking the failed step's dependent once a revision replaced the
 * step: before, the dependent was kept in the generation the follow-up read, blocked there behind the replacement
 * that then succeeded, and the run failed.
 *
 * Through a person's replan on the embedded stack's real machines, with the planner on a fake model.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
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
import { useModelPlanner } from '../support/model-planner.ts';
import { createStoreFaults } from '../support/stack-faults.ts';

const faults = createStoreFaults();
const model = useModelPlanner({ stack: { retryIntervalMs: 5, wrapStore: faults.wrap } });
const { stack } = model;

const echo = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

/** Polls the store (unwrapped) until `stepId` is in `generation`. */
async function inGeneration(runId: string, stepId: string, generation: number): Promise<void> {
  for (let tries = 0; tries < 800; tries++) {
    if ((await faults.raw().getStep(runId, stepId))?.generation === generation) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${stepId} of run ${runId} never reached generation ${generation}`);
}

describe("a revision's restarted step whose upstream step an invalidation moved and has not run again", () => {
  it("counts no late release of the upstream's ended generation: it waits for the current one", async () => {
    // b finished generation 1 with its release of c held; a's generation 2 is held at its claim, so b waits in its 2.
    const { runId, late, claimOfA } = await lateReleaseAfterInvalidation(
      stack,
      faults,
      'late release across an invalidation and a revision',
    );

    // A person's revision changes c alone: c restarts (generation 3), b is kept, pending in its generation 2.
    model.revise = (steps) => steps.map((s) => (s.id === 'c' ? { ...s, input: { value: 'c, again' } } : s));
    expect((await stack.request('POST', `/runs/${runId}/replan`, { reason: 'c says it again' })).status).toBe(202);
    await inGeneration(runId, 'c', 3);
    expect(await faults.raw().getStep(runId, 'b')).toMatchObject({ generation: 2, status: 'pending' });

    late.release();
    await executionEnded(stack, `${runId}-b-g1`);
    expect(await faults.raw().getStep(runId, 'c')).toMatchObject({ generation: 3, status: 'pending', remaining: 1 });
    expect(executedGenerations(stack, runId).c).toBeUndefined();

    claimOfA.release();
    const done = await waitForRun(stack, runId, (r) => r.status === 'complete' && r.revision === 2);
    expect(
      done.steps.map((s) => `${s.id}${s.generation}${s.status}`),
      summary(done),
    ).toEqual(['a2succeeded', 'b2succeeded', 'c3succeeded']);
    expect(executedGenerations(stack, runId)).toEqual({ a: [1, 2], b: [1, 2], c: [3] });
    expect(Date.parse(stepOf(done, 'c').startedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(stepOf(done, 'b').finishedAt ?? ''),
    );
  }, 60_000);
});

describe('a kept step that counted the release of a step the revision restarts', () => {
  it("does not run from the restarted step's superseded result: it waits for its next generation", async () => {
    const objective = 'kept dependent of a restarted step';
    // x is held at its claim, so c waits for it, having counted b's generation 1.
    const claimOfX = faults.hold({
      method: 'transitionStep',
      match: (call) => call.runId === faults.runIdFor(objective) && call.args[1] === 'x',
    });
    const runId = await stack.startRun({
      plan: plan(objective, [echo('b'), echo('x'), echo('c', { dependsOn: ['b', 'x'] })]),
    });
    await claimOfX.arrived;
    await waitForRun(stack, runId, (r) => stepOf(r, 'b').status === 'succeeded');
    // b's release of c follows its success write: read once it has landed.
    for (let tries = 0; tries < 400 && (await faults.raw().getStep(runId, 'c'))?.remaining !== 1; tries++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await faults.raw().getStep(runId, 'c')).toMatchObject({ generation: 1, released: ['b'], remaining: 1 });
    // b's next generation is held at its claim too.
    const claimOfB = faults.hold({
      method: 'transitionStep',
      match: (call) =>
        call.runId === runId && call.args[1] === 'b' && (call.args[2] as { generation: number }).generation === 2,
    });

    // A person's revision changes b: it runs again (generation 2), with c's only other upstream step still open.
    model.revise = (steps) => steps.map((s) => (s.id === 'b' ? { ...s, input: { value: 'b, again' } } : s));
    expect((await stack.request('POST', `/runs/${runId}/replan`, { reason: 'b says it again' })).status).toBe(202);
    await claimOfB.arrived;

    claimOfX.release();
    await executionEnded(stack, `${runId}-x-g1`);
    // c must still wait for b's generation 2: before, it counted b's generation 1 and ran once x released it.
    expect(await faults.raw().getStep(runId, 'c')).toMatchObject({ status: 'pending', remaining: 1 });
    expect(executedGenerations(stack, runId).c).toBeUndefined();

    claimOfB.release();
    const done = await waitForRun(stack, runId, (r) => r.status === 'complete' && r.revision === 2);
    expect(stepOf(done, 'b')).toMatchObject({ generation: 2, status: 'succeeded' });
    expect(stepOf(done, 'c').status, summary(done)).toBe('succeeded');
    expect(Date.parse(stepOf(done, 'c').startedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(stepOf(done, 'b').finishedAt ?? ''),
    );
  }, 60_000);
});

describe("a failure's follow-up that blocks the failed step's dependent after the revision replaced the step", () => {
  it('blocks nothing: the dependent waits for the replaced step in a new generation', async () => {
    const objective = 'late block across a revision';
    // b fails for good; its follow-up's block of c (read pending in generation 1) is held on its way to the store.
    const lateBlock = faults.hold({
      method: 'transitionStep',
      match: (call) =>
        call.runId === faults.runIdFor(objective) &&
        call.args[1] === 'c' &&
        (call.args[3] as { status?: string }).status === 'blocked',
    });
    model.revise = (steps) => steps.map((s) => (s.id === 'b' ? echo('b') : s));
    const failing = step(stack, 'b', T.fail, { input: { message: 'b is down', retryable: false } });
    const runId = await stack.startRun({ plan: plan(objective, [failing, echo('c', { dependsOn: ['b'] })]) });
    await lateBlock.arrived;
    // The failure's replan makes revision 2 (b an echo now) while the block is held.
    await waitForRun(stack, runId, (r) => r.revision === 2);
    await inGeneration(runId, 'b', 2);

    lateBlock.release();
    const done = await waitForRun(stack, runId, (r) => r.status !== 'running' && r.revision === 2);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}${s.status}`)).toEqual(['b2succeeded', 'c2succeeded']);
  }, 60_000);
});
