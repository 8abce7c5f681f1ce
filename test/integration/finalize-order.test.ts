/**
 * FinalizeRun failing a run (its deadline passed, its wait failed) closes the open steps with the ending, in one
 * decision of the run's decider (one batch, its records written steps first, the run last): a reader that finds the
 * run failed finds the step closed, and a step in flight can no longer succeed, nor be announced, in a run already
 * failed.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { plan, statusOf, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

const stack = useTestStack({ retryIntervalMs: 5, limits: { runDeadlineSeconds: 2 } });

describe('FinalizeRun at the deadline', () => {
  it('closes the step in flight with the run’s failure, and nothing of it follows', async () => {
    const runId = await stack.startRun({
      plan: plan('deadline closes steps first', [step(stack, 'S', T.sleep, { input: { ms: 20_000 } })]),
    });

    // The first read that finds the run failed finds S closed with it.
    const failed = await waitForRun(stack, runId, (run) => run.status === 'failed');

    expect(failed.terminal?.reason, summary(failed)).toBe('deadline');
    expect(statusOf(failed, 'S')).toBe('cancelled');
    await stack.settled();
    const types = (await stack.store.listEvents(runId)).map((e) => `${e.type}${e.stepId ? `:${e.stepId}` : ''}`);
    const finished = types.indexOf('RunFinished');
    expect(finished, types.join(' ')).toBeGreaterThan(-1);
    expect(types).not.toContain('StepSucceeded:S');
    // Nothing of S after the run's end: the sleep's late answer changes and announces nothing.
    expect(types.slice(finished + 1)).toEqual([]);
  }, 60_000);
});
