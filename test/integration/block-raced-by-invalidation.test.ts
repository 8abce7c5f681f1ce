/**
 * A failure's downstream block and an invalidation of that downstream (issue 10, chaos seed 27 run 60): before the
 * run's decider, the invalidation of B read its upstream A still running, A failed, its follow-ups read B in
 * generation 1, the invalidation moved B to generation 2, and the block of generation 1 lost its condition; nobody
 * blocked generation 2 and the run stayed `running` with B pending for good. Those writes no longer race: the
 * decider takes A's failure and the invalidation one after the other, in whichever order they come. Either way B is
 * blocked in the generation it is in now, as long as A is still failed, and the run fails.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

// No replanner answers the failure: the run fails with its downstream blocked.
const { stack, handlers } = useStackWithFaults({ limits: { maxReplans: 0 } });

const failingThenB = (objective: string) =>
  plan(objective, [
    step(stack, 'A', T.fail, { input: { message: 'for good', retryable: false } }),
    step(stack, 'B', T.echo, { input: { value: 'B' }, dependsOn: ['A'] }),
  ]);

describe('an invalidation of a failure’s downstream', () => {
  it('taken while the upstream still runs: blocks the new generation when the upstream fails, and the run fails', async () => {
    const objective = 'invalidation while the upstream runs';
    // A's attempt is held: A is running when the invalidation of B is decided.
    const attempt = handlers.hold({ key: 'StepExecutor', match: (p) => p.stepId === 'A' && p.previous === null });
    const runId = await stack.startRun({ plan: failingThenB(objective) });
    await attempt.arrived;
    const invalidation = await stack.request('POST', `/runs/${runId}/steps/B/invalidate`, { reason: 'stale' });
    expect(invalidation.status, JSON.stringify(invalidation.json)).toBe(202);
    attempt.release();

    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'A').status).toBe('failed');
    expect(stepOf(done, 'B')).toMatchObject({ status: 'blocked', generation: 2 });
  }, 60_000);

  it('taken after the failure blocked it: blocks the new generation, and the reopened run fails again', async () => {
    const runId = await stack.startRun({ plan: failingThenB('invalidation after the failure') });
    const failed = await waitForRun(stack, runId, undefined, 10_000);
    expect(failed.status, summary(failed)).toBe('failed');
    expect(stepOf(failed, 'B')).toMatchObject({ status: 'blocked', generation: 1 });

    const invalidation = await stack.request('POST', `/runs/${runId}/steps/B/invalidate`, { reason: 'stale' });
    expect(invalidation.status, JSON.stringify(invalidation.json)).toBe(202);

    // Before, the run stayed running with B pending in generation 2.
    const done = await waitForRun(
      stack,
      runId,
      (run) => run.status === 'failed' && stepOf(run, 'B').generation === 2,
      10_000,
    );
    expect(stepOf(done, 'B')).toMatchObject({ status: 'blocked', generation: 2 });
  }, 60_000);
});
