/**
 * An invalidation whose try failed while one of its moves was still under way (issue 10, chaos seed 42 run 3 and seed
 * 37 run 65: the invalidated step `ready` in its new generation for good, its dependents pending behind it, and the
 * announcement naming only the dependents).
 *
 * A try fails at its first failed move; the try after it reads the steps at once, while a move of the first is still
 * in flight. That move lands after the read, so the second try's own move of the step finds it in the next generation
 * already: it took the step for one a concurrent mover had started and left it to that mover to start. But the mover
 * was this invalidation, whose try had failed: nobody started it. The move carries the invalidation's key, so the
 * second try knows it for its own.
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
    // The first try's move of a is held; its move of b fails, and so does the try.
    const first = faults.hold({ method: 'startGeneration', match: moving('a') });
    faults.throwOn({ method: 'startGeneration', when: 'before', match: moving('b') });
    const invalidation = stack.request('POST', `/runs/${runId}/steps/a/invalidate`, { reason: 'stale' });
    await first.arrived;
    // The next try has read a in generation 1 when it moves it; the first try's move lands just before.
    const second = faults.hold({ method: 'startGeneration', match: moving('a') });
    await second.arrived;
    first.release();
    for (let moved = false; !moved; await new Promise((resolve) => setTimeout(resolve, 10)))
      moved = (await faults.raw().getStep(runId, 'a'))?.generation === 2;
    second.release();
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
