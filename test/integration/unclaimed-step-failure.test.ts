/**
 * A RunStep that fails for good before its claim lands (the claim write throttled past the Task's Retry, a crash
 * while it loaded or prepared the step): the step machine's Catch records the failure of a step that is still
 * `ready`, unclaimed, and the execution ends. Nothing else starts that generation again (its execution's name is
 * taken), so unless RecordFailure ends the step, the run stays `running` with a `ready` step nobody will claim.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { StepRecord } from '../../shared/ports/store.ts';
import { plan, statusOf, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

/** Every try of RunStep: the first and the step machine's six retries of the platform's errors. */
const RUN_STEP_TRIES = 7;

describe('a step whose RunStep failed for good before claiming it', () => {
  it('fails the step and ends the run instead of leaving it ready when every try of its claim is throttled', async () => {
    const objective = 'a claim throttled past its retries';
    const throttled = faults.throwOn({
      method: 'transitionStep',
      when: 'before',
      name: 'ThrottlingException',
      times: RUN_STEP_TRIES,
      match: (call) =>
        call.runId === faults.runIdFor(objective) &&
        call.args[1] === 'B' &&
        (call.args[3] as Partial<StepRecord>).status === 'running',
    });
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.echo, { input: { value: 'a' } }),
        step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: 'b' } }),
        step(stack, 'C', T.echo, { dependsOn: ['B'], input: { value: 'c' } }),
      ]),
    });
    await throttled.fired;

    const done = await waitForRun(stack, runId, undefined, 20_000);
    expect(throttled.count()).toBe(RUN_STEP_TRIES);
    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'B')).toMatchObject({ status: 'failed', attempts: 0, error: { code: 'E_EXECUTOR' } });
    expect(statusOf(done, 'C')).toBe('blocked');
    // No attempt ran: none is recorded.
    expect(await faults.raw().listAttempts(runId, 'B')).toHaveLength(0);
  }, 60_000);
});
