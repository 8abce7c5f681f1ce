/**
 * An invalidation whose try failed while one of its moves was still under way (issue 10, chaos seed 42 run 3 and seed
 * 37 run 65: the invalidated step `ready` in its new generation for good, its dependents pending behind it, and the
 * announcement naming only the dependents).
 *
 * A try used to fail at its first failed move and the try after it read the steps at once, while a move of the first
 * was still in flight; that move landed after the read, and the second try took the step for one a concurrent mover
 * had started. A try's moves now go through a pool that starts nothing after a failure and throws only once the
 * moves in flight are done, so the next try reads what the first one moved, and knows it for its own by its key.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { executedGenerations, plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { type Call, useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

const echo = (id: string, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

describe('an invalidation whose failed try leaves a move in flight that lands after the next try read the steps', () => {
  it('takes that move for its own: the step is started and the run finishes again', async () => {
    const objective = 'invalidation move landing after the next try read';
    const runId = await stack.startRun({ plan: plan(objective, [echo('a'), echo('b', { dependsOn: ['a'] })]) });
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');

    const moving = (stepId: string) => (call: Call) => call.runId === runId && call.args[1] === stepId;
    // The first try's move of a is held; its move of b fails, and so does the try, but only once the move of a in
    // flight is done (the moves go through a pool that lets nothing run past its failure): the next try reads a in
    // the generation that move made, with this invalidation's key, and takes it for its own.
    const first = faults.hold({ method: 'startGeneration', match: moving('a') });
    const failed = faults.throwOn({ method: 'startGeneration', when: 'before', match: moving('b') });
    const invalidation = stack.request('POST', `/runs/${runId}/steps/a/invalidate`, { reason: 'stale' });
    await first.arrived;
    for (; failed.count() === 0; await new Promise((resolve) => setTimeout(resolve, 10)));
    first.release();
    expect((await invalidation).status).toBe(202);

    // Before, a stayed ready in generation 2 with no execution, b pending behind it, and the run running.
    const again = await waitForRun(
      stack,
      runId,
      (run) => run.status === 'complete' && stepOf(run, 'b').generation === 2,
      10_000,
    );
    expect(again.steps.map((s) => `${s.id}${s.generation}:${s.status}`)).toEqual(['a2:succeeded', 'b2:succeeded']);
    expect(executedGenerations(stack, runId)).toEqual({ a: [1, 2], b: [1, 2] });
  }, 60_000);
});
