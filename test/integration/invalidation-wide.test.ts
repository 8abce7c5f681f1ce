/**
 * An invalidation of a step that many steps depend on costs what it changes, not what it changes times the run. On
 * the main of the issue "Hostile input, round 2", a completed run reopened by invalidating the root of a 2,000-step
 * fan-out kept the old generations of its sinks on the run's frontier: every one of the 1,999 new generations that
 * ended looked at the whole run (a read of every step), the process grew past 4 GB and died, and a restart resumed
 * into the same death. The moves now take the generations they end off the frontier, and the run's steps are read
 * as a whole a bounded number of times whatever the width.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const WIDTH = 150;
const { stack, faults } = useStackWithFaults({ limits: { maxSteps: WIDTH + 1 } });

describe('an invalidation of the root of a wide fan-out', () => {
  it('reads the whole run a bounded number of times when every dependent runs again', async () => {
    const objective = 'wide fan-out invalidated at its root';
    const leaves = Array.from({ length: WIDTH }, (_, i) =>
      step(stack, `s${i}`, T.echo, { dependsOn: ['r'], input: { value: i } }),
    );
    const runId = await stack.startRun({
      plan: plan(objective, [step(stack, 'r', T.echo, { input: { value: 'root' } }), ...leaves]),
    });
    const done = await waitForRun(stack, runId, undefined, 60_000);
    expect(done.status, summary(done)).toBe('complete');
    const listedBefore = faults.calls('listSteps', runId);

    const answer = await stack.request('POST', `/runs/${runId}/steps/r/invalidate`, { reason: 'root changed' });
    expect(answer.status).toBe(202);
    expect((answer.json as { stepIds: string[] }).stepIds).toHaveLength(WIDTH + 1);
    const again = await waitForRun(stack, runId, (run) => run.status !== 'running', 60_000);
    await stack.settled();

    expect(again.status, summary(again)).toBe('complete');
    expect(stepOf(again, 's0').generation).toBe(2);
    expect(stepOf(again, `s${WIDTH - 1}`).status).toBe('succeeded');
    // Before: a listing per dependent that ended in its new generation (165 here). Now only the sinks ending together
    // at the very end look at the whole run, as on the first run (9 to 21 here): what ends in parallel, not the width.
    expect(faults.calls('listSteps', runId) - listedBefore).toBeLessThan(WIDTH / 3);
  }, 120_000);
});
