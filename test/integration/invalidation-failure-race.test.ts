/**
 * An invalidation racing an upstream failure outside its scope (issue 10, chaos seed 11 run 151: steps left `pending`
 * in a new generation whose upstream had failed; the run stayed `running` for good).
 *
 * The invalidation read the run's steps while the upstream step was still running, so it saw nothing to block. The
 * failure's own follow-up read the dependent in its old generation and tried to block that one, but the invalidation
 * had moved it meanwhile: the block lost its generation condition. Nobody blocked the new generation, and nothing
 * would ever release it.
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
