/**
 * A failure's downstream block raced by an invalidation (issue 10, chaos seed 27 run 60): the invalidation of B read
 * its upstream A still running, A failed, its follow-ups read B in generation 1, the invalidation moved B to
 * generation 2, and the block of generation 1 lost its condition. Nobody blocked generation 2 (the invalidation had
 * seen nothing failed), and the run stayed `running` with B pending for good. The block follows B to the generation
 * it is in now, as long as A is still failed.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { StepPatch } from '../../shared/ports/store.ts';
import { plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { type Call, useStackWithFaults } from '../support/stack-faults.ts';

// No replanner answers the failure: the run fails with its downstream blocked.
const { stack, faults } = useStackWithFaults({ limits: { maxReplans: 0 } });

const objective = 'block raced by an invalidation';
const later = 'invalidation that moved a blocked step';
const ofStep = (call: Call, stepId: string, of = objective) =>
  call.runId === faults.runIdFor(of) && call.args[1] === stepId;
const writes = (call: Call, status: string) => (call.args[3] as StepPatch).status === status;

describe("a failure whose downstream block loses to an invalidation's new generation", () => {
  it('blocks the new generation, and the run fails', async () => {
    const failing = faults.hold({ method: 'transitionStep', match: (c) => ofStep(c, 'A') && writes(c, 'failed') });
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.fail, { input: { message: 'for good', retryable: false } }),
        step(stack, 'B', T.echo, { input: { value: 'B' }, dependsOn: ['A'] }),
      ]),
    });
    await failing.arrived;
    // The invalidation reads A still running, then is held before it moves B.
    const moving = faults.hold({ method: 'startGeneration', match: (c) => ofStep(c, 'B') });
    const invalidation = stack.request('POST', `/runs/${runId}/steps/B/invalidate`, { reason: 'stale' });
    await moving.arrived;
    const blocking = faults.hold({ method: 'transitionStep', match: (c) => ofStep(c, 'B') && writes(c, 'blocked') });
    failing.release();
    await blocking.arrived;
    // A's follow-ups read B in generation 1; B moves to generation 2 before their block lands.
    moving.release();
    for (let moved = false; !moved; await new Promise((resolve) => setTimeout(resolve, 10)))
      moved = (await faults.raw().getStep(runId, 'B'))?.generation === 2;
    blocking.release();
    expect((await invalidation).status).toBe(202);

    // Before, the run stayed running with B pending in generation 2.
    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'B')).toMatchObject({ status: 'blocked', generation: 2 });
  }, 60_000);
});

describe('an invalidation that read its upstream running and moved a step its failure had blocked meanwhile', () => {
  it('blocks the new generation, and the reopened run fails again', async () => {
    const failing = faults.hold({
      method: 'transitionStep',
      match: (c) => ofStep(c, 'A', later) && writes(c, 'failed'),
    });
    const runId = await stack.startRun({
      plan: plan(later, [
        step(stack, 'A', T.fail, { input: { message: 'for good', retryable: false } }),
        step(stack, 'B', T.echo, { input: { value: 'B' }, dependsOn: ['A'] }),
      ]),
    });
    await failing.arrived;
    // The invalidation reads the run running and A running, then is held before it moves B.
    const moving = faults.hold({ method: 'startGeneration', match: (c) => ofStep(c, 'B', later) });
    const invalidation = stack.request('POST', `/runs/${runId}/steps/B/invalidate`, { reason: 'stale' });
    await moving.arrived;
    // A fails, blocks B in generation 1, and the run fails; then B moves to generation 2 and the run reopens.
    failing.release();
    await waitForRun(stack, runId, (run) => run.status === 'failed', 10_000);
    moving.release();
    expect((await invalidation).status).toBe(202);

    // Before, the run stayed running with B pending in generation 2: the invalidation saw A running.
    const done = await waitForRun(
      stack,
      runId,
      (run) => run.status === 'failed' && stepOf(run, 'B').generation === 2,
      10_000,
    );
    expect(stepOf(done, 'B')).toMatchObject({ status: 'blocked', generation: 2 });
  }, 60_000);
});
