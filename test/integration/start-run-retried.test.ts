/**
 * StartRun under a throttle that outlasts its Task's Retry (issue 10, chaos seed 60 run 87): past the six tries the
 * run machine takes the Catch and fails the run (FailRun, `planning_failed`) though its plan was fine and its steps
 * may already run. StartRun is tried in place too, each part of it safe to repeat, so such a run starts and runs.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { plan, step, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

describe('StartRun whose store calls keep failing', () => {
  it('starts the run once the throttles pass, though they outlast the Task Retry', async () => {
    const objective = 'start run throttled';
    const throttled = faults.throwOn({
      method: 'putSteps',
      when: 'before',
      match: (call) => call.runId !== undefined && call.runId === faults.runIdFor(objective),
      times: 7,
    });
    const runId = await stack.startRun({
      plan: plan(objective, [step(stack, 'A', T.echo, { input: { value: 'a' } })]),
    });

    const done = await waitForRun(stack, runId, undefined, 20_000);

    expect(throttled.count()).toBe(7);
    expect(done.status, summary(done)).toBe('complete');
  });
});
