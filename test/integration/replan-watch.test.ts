/**
 * The replan watch (engine/replan/watch.ts) through the embedded stack: a final failure the replanner never answers,
 * because the store throttled every try of every delivery of StepFailed (a storm longer than the replanner's tries in
 * place, then passing), is declined by the failure's watch once its time is up, and the run ends `failed` saying so.
 * Before, the run stayed `running` until its deadline (a day) with every step ended. A failure the replanner answers
 * is left as it answered it: the watch finds it answered and does nothing.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { REPLAN_UNANSWERED_CODE, replanWatchStepId } from '../../shared/engine/replan/watch.ts';
import { stepExecutionName } from '../../shared/ports/executions.ts';
import { WORK_TRIES } from '../../shared/services/write-again.ts';
import { executionEnded, plan, type RunView, step, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

/** Past the replanner's three deliveries, each tried in place WORK_TRIES times (about 7 s in all). */
const WATCH_SECONDS = 10;
const { stack, faults } = useStackWithFaults({ limits: { maxReplans: 3, replanWatchSeconds: WATCH_SECONDS } });

/** The bus's deliveries of one event (infra/local/bus-rules.ts). */
const DELIVERIES = 3;

const ended = (run: RunView) => ['complete', 'failed', 'cancelled', 'paused'].includes(run.status);

/** A run whose step A fails for good (no alternative in the catalog), blocking B; C has succeeded. */
const runWithUnreplannableFailure = (objective: string): Promise<string> =>
  stack.startRun({
    plan: plan(objective, [
      step(stack, 'A', T.fail, { input: { message: 'for good', retryable: false } }),
      step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: 'b' } }),
      step(stack, 'C', T.echo, { input: { value: 'c' } }),
    ]),
  });

const watchOf = (runId: string, stepId: string) => stepExecutionName(runId, replanWatchStepId(stepId), 1);

describe('the replan watch of a final failure', () => {
  it('declines a failure the replanner never answered and ends the run failed', async () => {
    const objective = 'replan watch: every take throttled';
    // Every try of every delivery to take the failure is throttled; the storm passes before the watch looks.
    const storm = faults.throwOn({
      method: 'markRunOnce',
      when: 'before',
      times: DELIVERIES * WORK_TRIES,
      match: (call) => call.runId === faults.runIdFor(objective) && call.args[1] === 'handledFailures',
    });
    const runId = await runWithUnreplannableFailure(objective);
    await storm.fired;
    // The replanner has given up: the run waits for its answer with every step ended.
    const waiting = await waitForRun(stack, runId, (run) => run.steps.every((s) => s.status !== 'pending'));
    expect(waiting.status, summary(waiting)).toBe('running');

    const done = await waitForRun(stack, runId, ended, (WATCH_SECONDS + 20) * 1000);

    // Before: running until the run deadline, nothing open.
    expect(done.status, summary(done)).toBe('failed');
    expect(done.steps.map((s) => `${s.id}=${s.status}`)).toEqual(['A=failed', 'B=blocked', 'C=succeeded']);
    expect(done.terminal?.evidence.replans).toEqual([
      expect.objectContaining({ stepId: 'A', failure: 'A#1', code: REPLAN_UNANSWERED_CODE }),
    ]);
    await executionEnded(stack, watchOf(runId, 'A'));
  }, 60_000);

  it('leaves a failure the replanner holds to it, even past the watch time', async () => {
    const objective = 'replan watch: held by a replanner';
    // The replanner never gets to take the failure; a holder that crashed holding it is then stood in by the test.
    let storm = true;
    faults.throwOn({
      method: 'markRunOnce',
      when: 'before',
      times: 1_000,
      match: (call) => storm && call.runId === faults.runIdFor(objective) && call.args[1] === 'handledFailures',
    });
    const runId = await runWithUnreplannableFailure(objective);
    await waitForRun(stack, runId, (run) => run.steps.every((s) => s.status !== 'pending'));
    expect(await faults.raw().markRunOnce(runId, 'handledFailures', 'A#1')).toBe(true);
    storm = false;

    await executionEnded(stack, watchOf(runId, 'A'));

    // A revision may still be on its way from the holder: a decline now could end the run under it.
    const run = await faults.raw().getRun(runId);
    expect(run?.status).toBe('running');
    expect(run?.replanDeclines ?? []).toEqual([]);
    await stack.request('POST', `/runs/${runId}/cancel`);
  }, 60_000);

  it('leaves a failure the replanner answered as it was answered', async () => {
    const runId = await runWithUnreplannableFailure('replan watch: answered');
    const done = await waitForRun(stack, runId, ended);
    expect(done.status, summary(done)).toBe('failed');

    // The watch looks once its time is up, finds the failure declined by the replanner, and ends.
    await executionEnded(stack, watchOf(runId, 'A'));

    const declines = (await faults.raw().getRun(runId))?.replanDeclines ?? [];
    expect(declines).toHaveLength(1);
    expect(declines[0]).not.toContain(REPLAN_UNANSWERED_CODE);
    expect((await waitForRun(stack, runId, ended)).terminal).toEqual(done.terminal);
  }, 60_000);
});
