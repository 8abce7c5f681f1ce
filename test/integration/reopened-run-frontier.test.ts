/**
 * A run that ended by closing its open steps (here `onFailure: fail-run`) puts those steps on its frontier, so that
 * a later reopening can end again. When that record is lost to the store (a throttle), the repeat of the ending
 * finds the steps closed already and records nothing: once an invalidation reopened the run, the sink it had closed
 * was missing from the frontier, nobody looked at the run any more, and it stayed `running` with no step open (the
 * chaos suite's "stuck: the stack went quiet with the run open", seed 16 run 78, a run failed half-way through its
 * start). The invalidation puts the sinks that ended with the run on the frontier again.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

// No replanner answers the failure: fail-run ends the run at once.
const { stack, faults } = useStackWithFaults({ limits: { maxReplans: 0 } });

describe('a reopened run whose ending lost the frontier record of a step it closed', () => {
  it('ends again once the invalidated steps have run', async () => {
    const objective = 'frontier record lost at the ending';
    const lost = faults.throwOn({
      method: 'recordFrontier',
      when: 'before',
      match: (call) =>
        call.runId === faults.runIdFor(objective) && (call.args[1] as readonly string[]).includes('slow#1'),
    });
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'w', T.echo, { input: { value: 'w' } }),
        step(stack, 'slow', T.sleep, { input: { ms: 30_000 } }),
        step(stack, 'guard', T.fail, {
          input: { message: 'for good', retryable: false },
          onFailure: 'fail-run',
        }),
      ]),
    });
    const failed = await waitForRun(stack, runId);
    expect(failed.status, summary(failed)).toBe('failed');
    expect(stepOf(failed, 'slow').status).toBe('cancelled');
    expect(lost.count()).toBe(1);

    const answer = await stack.request('POST', `/runs/${runId}/steps/w/invalidate`, { reason: 'changed' });
    expect(answer.status).toBe(202);
    const again = await waitForRun(stack, runId, (run) => run.status !== 'running', 20_000);

    expect(again.status, summary(again)).toBe('failed');
    expect(stepOf(again, 'w').generation).toBe(2);
    expect(stepOf(again, 'w').status).toBe('succeeded');
  }, 60_000);
});
