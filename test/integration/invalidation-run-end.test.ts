/**
 * An invalidation of a finished run must leave it finishing again (issue 10, chaos seed 11 runs 25, 49, 99, 147): the
 * invalidator runs as a second process on the embedded stack, with a store that fails or races at a chosen point.
 *
 * - A repeat of an invalidation whose first try blocked the new generations (their upstream still failed) and then
 *   failed before it looked at the run's end: the repeat found the steps moved and blocked, blocked nothing itself,
 *   and so never looked either; the reopened run stayed `running` with no step open.
 * - A look at the run that read its steps before they moved, writing its ending between the invalidation's re-read
 *   and its announcement: the announcement was refused and the new generation left `ready` in a complete run.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createInterpreter } from '../../shared/services/interpreter.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import { answerWaiter, writeEnding } from '../../shared/services/run-end.ts';
import { plan, step, stepOf, summary, useTestStack, waitForRun } from '../support/local-stack.ts';
import { injectedThrottle, interceptStore, secondProcessDeps } from '../support/second-process.ts';

// No replanner answers the failure: the run fails with its downstream blocked.
const stack = useTestStack({ limits: { maxReplans: 0 } });

const echo = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

describe('a repeated invalidation whose first try blocked its steps and failed before the run end', () => {
  it('looks at the run end on the repeat, and the reopened run fails again', async () => {
    const runId = await stack.startRun({
      plan: plan('invalidation repeated after blocking', [
        step(stack, 'A', T.fail, { input: { message: 'for good', retryable: false } }),
        echo('B', { dependsOn: ['A'] }),
        echo('C'),
      ]),
    });
    const failed = await waitForRun(stack, runId);
    expect(failed.status, summary(failed)).toBe('failed');
    let thrown = 0;
    const store: Store = interceptStore(stack.store, ['recordFrontier'], async (call, args) => {
      const [id, keys] = args as [string, readonly string[]];
      if (thrown === 0 && id === runId && keys.includes('B#2')) {
        thrown++;
        throw injectedThrottle();
      }
      return call();
    });
    const invalidator = createInvalidator(secondProcessDeps(stack, store));
    const request = { runId, stepId: 'B', reason: 'stale', requestId: 'repeat-1' };

    // The repeat is the invalidator's own next try, in place, after the throttled one.
    const again = await invalidator.invalidateStep(request);

    expect(thrown).toBe(1);
    expect(again).toMatchObject({ stepIds: ['B'] });
    // Before, the run stayed running: B blocked in its generation 2, nothing open, nobody to finish it.
    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'B')).toMatchObject({ status: 'blocked', generation: 2 });
  }, 60_000);
});

describe('an invalidation whose run is finished by a stale look before the announcement', () => {
  it('reopens the run again, announces and runs the new generation', async () => {
    const runId = await stack.startRun({
      plan: plan('invalidation raced by a stale ending', [echo('a'), echo('b', { dependsOn: ['a'] })]),
    });
    const first = await waitForRun(stack, runId);
    expect(first.status, summary(first)).toBe('complete');
    const ctx = createInterpreter(secondProcessDeps(stack));
    let raced = 0;
    const store: Store = interceptStore(stack.store, ['updateRun'], async (call, args) => {
      if (raced === 0 && args[0] === runId && JSON.stringify(args).includes('StepsInvalidated')) {
        raced++;
        // What a settleRun that listed the steps before b moved writes, after the invalidation's re-read of the run.
        const terminal = { state: 'complete', reason: 'completed', evidence: {}, at: ctx.now() } as const;
        await answerWaiter(ctx, await writeEnding(ctx, runId, ['running'], terminal));
      }
      return call();
    });
    const invalidator = createInvalidator(secondProcessDeps(stack, store));

    const result = await invalidator.invalidateStep({ runId, stepId: 'b', reason: 'stale' });

    expect(raced).toBe(1);
    expect(result).toMatchObject({ stepIds: ['b'], reopened: true });
    // Before, b stayed ready in its generation 2 in a complete run: the announcement was refused, nothing started it.
    const done = await waitForRun(
      stack,
      runId,
      (run) =>
        run.status === 'complete' && stepOf(run, 'b').status === 'succeeded' && stepOf(run, 'b').generation === 2,
      10_000,
    );
    expect(done.steps.map((s) => `${s.id}${s.generation}:${s.status}`)).toEqual(['a1:succeeded', 'b2:succeeded']);
  }, 60_000);
});
