/**
 * The replanner's answer to a final StepFailed while the store keeps throttling it, through the embedded stack (its
 * own replanner, on the bus's three deliveries). The run waits for that answer (awaitsReplan: a decline settles it),
 * with every step ended and nothing else to end it. Each delivery used to try the answer three times in place: once
 * nine tries had met a throttle, the failure was given back with nobody left to answer it, and the run stayed
 * `running` for good (chaos seed 22 run 9: a rejected review's failure, "the stack went quiet with the run open").
 * The answer is now tried in place under the policy a run's invalidation has (write-again.ts workAgainPolicy), and
 * so is taking the failure.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { WORK_TRIES } from '../../shared/services/write-again.ts';
import { plan, type RunView, step, summary, waitForRun } from '../support/local-stack.ts';
import { type Call, useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults({ limits: { maxReplans: 3 } });

/** The bus's deliveries of one event (infra/local/bus-rules.ts). */
const DELIVERIES = 3;
/** What each delivery tried in place before. */
const TRIES_BEFORE = 3;
/** More throttles than the three deliveries used to try, fewer than they try now: a storm that passes. */
const THROTTLES = DELIVERIES * TRIES_BEFORE + 3;

const ended = (run: RunView) => ['complete', 'failed', 'cancelled', 'paused'].includes(run.status);

/** A run whose step A fails for good (no alternative in the catalog), blocking B; C has succeeded. */
async function runWithUnreplannableFailure(objective: string): Promise<string> {
  return stack.startRun({
    plan: plan(objective, [
      step(stack, 'A', T.fail, { input: { message: 'for good', retryable: false } }),
      step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: 'b' } }),
      step(stack, 'C', T.echo, { input: { value: 'c' } }),
    ]),
  });
}

const markOf = (runId: string, set: string) => (call: Call) => call.runId === runId && call.args[1] === set;

describe("the replanner's answer to a final failure while the store throttles it", () => {
  it('declines the failure and ends the run failed when its decline was throttled past three tries a delivery', async () => {
    const objective = 'replan answer: decline throttled';
    // Armed before the run exists: the mark names the run, known once it is created.
    const throttled = faults.throwOn({
      method: 'markRunOnce',
      when: 'before',
      times: THROTTLES,
      match: (call) => markOf(faults.runIdFor(objective) ?? '', 'replanDeclines')(call),
    });
    const runId = await runWithUnreplannableFailure(objective);

    const done = await waitForRun(stack, runId, ended, 30_000);

    // Before: every delivery's three answers met the throttle; the run stayed running with A failed and B blocked.
    expect(done.status, summary(done)).toBe('failed');
    expect(throttled.count()).toBe(THROTTLES);
    expect(done.steps.map((s) => `${s.id}=${s.status}`)).toEqual(['A=failed', 'B=blocked', 'C=succeeded']);
    expect(done.terminal?.evidence.replans).toEqual([
      expect.objectContaining({ stepId: 'A', failure: 'A#1', code: expect.stringMatching(/^E_/) }),
    ]);
  }, 60_000);

  it('takes the failure when taking it was throttled on every delivery', async () => {
    const objective = 'replan answer: take throttled';
    const throttled = faults.throwOn({
      method: 'markRunOnce',
      when: 'before',
      times: DELIVERIES + 1,
      match: (call) => markOf(faults.runIdFor(objective) ?? '', 'handledFailures')(call),
    });
    const runId = await runWithUnreplannableFailure(objective);

    const done = await waitForRun(stack, runId, ended, 30_000);

    // Before: a throttled take failed its delivery at once; three of them spent every delivery.
    expect(done.status, summary(done)).toBe('failed');
    expect(throttled.count()).toBe(DELIVERIES + 1);
    expect(DELIVERIES + 1).toBeLessThan(WORK_TRIES);
  }, 60_000);
});
