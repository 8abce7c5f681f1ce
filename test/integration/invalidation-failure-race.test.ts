/**
 * An invalidation racing an upstream failure outside its scope (issue 10, chaos seed 11 run 151: steps left `pending`
 * in a new generation whose upstream had failed; the run stayed `running` for good).
 *
 * The invalidation read the run's steps while the upstream step was still running, so it saw nothing to block. The
 * failure's own follow-up read the dependent in its old generation and tried to block that one, but the invalidation
 * had moved it meanwhile: the block lost its generation condition. Nobody blocked the new generation, and nothing
 * would ever release it.
 *
 * And the other way round (chaos seed 11 runs 39, 107, seed 15 run 152: a run `failed`, `incomplete`, with steps
 * blocked although every upstream step succeeded): an invalidation of the failing step itself moved its dependent
 * first; the failure's follow-up, which had read the failed step before it moved, blocked the dependent's new
 * generation, which waits for the failed step's next generation, not for this failure.
 *
 * And its mirror (chaos seed 31 run 34: a cancelled run with steps blocked in their generation 2 behind succeeded
 * upstream steps): the failure's follow-up read the dependent before it moved, so its block lost the generation
 * condition; it then followed the dependent to its new generation and blocked it, since the failed step had not moved
 * yet, although that generation waits for the failed step's next one.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep, StepStatus } from '../../shared/plan/schema.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import { plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { interceptStore, secondProcessDeps } from '../support/second-process.ts';
import { type Call, useStackWithFaults } from '../support/stack-faults.ts';

// No replanner answers the failure: the run fails with its downstream blocked.
const { stack, faults } = useStackWithFaults({ limits: { maxReplans: 0 } });

const echo = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

/** A `transitionStep` of the objective's run moving `stepId` to `status`. */
const moving = (objective: string, stepId: string, status: StepStatus) => (call: Call) =>
  call.runId === faults.runIdFor(objective) &&
  call.args[1] === stepId &&
  (call.args[3] as { status?: StepStatus }).status === status;

describe('an invalidation whose scope waits for a step that fails while the generations are being started', () => {
  it('blocks the new generation the failure could not, and the run fails', async () => {
    const objective = 'invalidation raced by an upstream failure';
    const failing = faults.hold({ method: 'transitionStep', match: moving(objective, 'A', 'failed') });
    const blocking = faults.hold({ method: 'transitionStep', match: moving(objective, 'C', 'blocked') });
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.fail, { input: { message: 'for good', retryable: false } }),
        echo('B'),
        echo('C', { dependsOn: ['A', 'B'] }),
      ]),
    });
    await failing.arrived;
    await waitForRun(stack, runId, (run) => stepOf(run, 'B').status === 'succeeded', 10_000);

    // The invalidation of B has read the steps (A still running) when it starts C's next generation; A's failure
    // lands then, and its block of C is written once C has moved.
    const atMove = deferred();
    const moveC = deferred();
    const store: Store = interceptStore(stack.store, ['startGeneration'], async (call, args) => {
      if (args[0] !== runId || args[1] !== 'C') return call();
      atMove.resolve();
      await moveC.promise;
      const moved = await call();
      blocking.release();
      return moved;
    });
    const invalidator = createInvalidator(secondProcessDeps(stack, store));
    const invalidation = invalidator.invalidateStep({ runId, stepId: 'B', reason: 'stale' });
    await atMove.promise;
    failing.release();
    await blocking.arrived;
    moveC.resolve();

    expect(await invalidation).toMatchObject({ stepIds: ['B', 'C'] });
    // Before, C stayed pending in its generation 2, waiting for A, which had failed: the run stayed running.
    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('failed');
    expect(done.steps.map((s) => `${s.id}${s.generation}:${s.status}`)).toEqual([
      'A1:failed',
      'B2:succeeded',
      'C2:blocked',
    ]);
  }, 60_000);
});

describe('a failure whose step an invalidation moves, after its dependent moved and before the step did', () => {
  it('leaves the new generation of the dependent to the next one of the step, and the run completes', async () => {
    const objective = 'failure follow-up after its dependent moved';
    const failing = faults.hold({ method: 'transitionStep', match: moving(objective, 'F', 'failed') });
    const looked = faults.hold({
      method: 'recordFrontier',
      match: (call) => call.runId === faults.runIdFor(objective) && (call.args[1] as string[]).includes('F#1'),
    });
    const runId = await stack.startRun({
      plan: plan(objective, [
        // Fails its first call for good (no retry), succeeds on its next generation's.
        step(stack, 'F', T.flaky, { input: { key: `f-${Date.now()}`, failures: 1 }, maxRetries: 0 }),
        echo('D', { dependsOn: ['F'] }),
      ]),
    });
    await failing.arrived;

    // The invalidation of F moves D first; F's failure lands then, and F moves once its follow-up has looked.
    const dMoved = deferred();
    const moveF = deferred();
    const store: Store = interceptStore(stack.store, ['startGeneration'], async (call, args) => {
      if (args[0] !== runId) return call();
      if (args[1] === 'F') await moveF.promise;
      const moved = await call();
      if (args[1] === 'D') dMoved.resolve();
      return moved;
    });
    const invalidator = createInvalidator(secondProcessDeps(stack, store));
    const invalidation = invalidator.invalidateStep({ runId, stepId: 'F', reason: 'stale' });
    await dMoved.promise;
    failing.release();
    await looked.arrived;
    looked.release();
    moveF.resolve();

    expect(await invalidation).toMatchObject({ stepIds: ['F', 'D'] });
    // Before, D was blocked in its generation 2 by F's first failure: F's generation 2 succeeded, the run failed.
    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}:${s.status}`)).toEqual(['F2:succeeded', 'D2:succeeded']);
  }, 60_000);
});

describe('a failure whose block of a dependent loses to an invalidation of the failed step, before the step moved', () => {
  it("leaves the dependent's new generation to the step's next one, and the run completes", async () => {
    const objective = 'failure block lost to an invalidation of its step';
    const failing = faults.hold({ method: 'transitionStep', match: moving(objective, 'F', 'failed') });
    const blocking = faults.hold({ method: 'transitionStep', match: moving(objective, 'D', 'blocked') });
    const looked = faults.hold({
      method: 'recordFrontier',
      match: (call) => call.runId === faults.runIdFor(objective) && (call.args[1] as string[]).includes('F#1'),
    });
    const runId = await stack.startRun({
      plan: plan(objective, [
        // Fails its first call for good (no retry), succeeds on its next generation's.
        step(stack, 'F', T.flaky, { input: { key: `fb-${Date.now()}`, failures: 1 }, maxRetries: 0 }),
        echo('D', { dependsOn: ['F'] }),
      ]),
    });
    await failing.arrived;

    // The invalidation of F has read the steps; F's failure lands and its follow-up reads D in generation 1, then D
    // moves before the block is written, and F moves only once the follow-up has looked at the run.
    const atD = deferred();
    const moveD = deferred();
    const dMoved = deferred();
    const moveF = deferred();
    const store: Store = interceptStore(stack.store, ['startGeneration'], async (call, args) => {
      if (args[0] !== runId) return call();
      if (args[1] === 'F') await moveF.promise;
      if (args[1] === 'D') {
        atD.resolve();
        await moveD.promise;
      }
      const moved = await call();
      if (args[1] === 'D') dMoved.resolve();
      return moved;
    });
    const invalidator = createInvalidator(secondProcessDeps(stack, store));
    const invalidation = invalidator.invalidateStep({ runId, stepId: 'F', reason: 'stale' });
    await atD.promise;
    failing.release();
    await blocking.arrived;
    moveD.resolve();
    await dMoved.promise;
    blocking.release();
    await looked.arrived;
    looked.release();
    moveF.resolve();

    expect(await invalidation).toMatchObject({ stepIds: ['F', 'D'] });
    // Before, the lost block followed D to its generation 2 (F was still failed there): F's generation 2 succeeded
    // and D stayed blocked behind it.
    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}:${s.status}`)).toEqual(['F2:succeeded', 'D2:succeeded']);
  }, 60_000);
});
