/**
 * The replan watch through the embedded stack: when the decider asks the replanner about a final failure
 * (ReplanAsked), it schedules a timer at the watch's time (CAIRN_REPLAN_WATCH_SECONDS, the stack's
 * `replanWatchSeconds`); the timer's ReplanWatchExpired declines the failure if it still stands unanswered
 * (E_REPLAN_UNANSWERED), and the run ends `failed` saying so. Before, a failure the replanner never answered (every
 * delivery of StepFailed failed) left the run `running` until its deadline (a day) with every step ended. A failure
 * the replanner answered is left as it answered it, and an answer that comes after the watch changes nothing.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { REPLAN_UNANSWERED_CODE } from '../../shared/engine/run/rules/replans.ts';
import { plan, type RunView, step, summary, waitForRun } from '../support/local-stack.ts';
import type { Payload } from '../support/stack-faults.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

/** Well past the replanner's answer when it does answer (a few milliseconds: A has no alternative). */
const WATCH_SECONDS = 4;
const { stack, faults, handlers } = useStackWithFaults({
  limits: { maxReplans: 3, replanWatchSeconds: WATCH_SECONDS },
});

/** The bus's deliveries of one event (infra/local/bus-rules.ts). */
const DELIVERIES = 3;

const ended = (run: RunView) => ['complete', 'failed', 'cancelled', 'paused'].includes(run.status);
const allEnded = (run: RunView) => run.steps.every((s) => s.status !== 'pending' && s.status !== 'running');

/** A run whose step A fails for good (no alternative in the catalog), blocking B; C succeeds. */
const runWithUnreplannableFailure = (objective: string): Promise<string> =>
  stack.startRun({
    plan: plan(objective, [
      step(stack, 'A', T.fail, { input: { message: 'for good', retryable: false } }),
      step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: 'b' } }),
      step(stack, 'C', T.echo, { input: { value: 'c' } }),
    ]),
  });

/** The bus's delivery of A's final failure of the objective's run to the replanner. */
const replannerDeliveryOf = (objective: string) => ({
  key: 'Replanner',
  match: (payload: Payload) => {
    const detail = payload.detail as { runId?: string; stepId?: string } | undefined;
    return detail?.runId === faults.runIdFor(objective) && detail?.stepId === 'A';
  },
});

/** The runs whose watch's timer posted its ReplanWatchExpired to the run's mailbox (the timers post through it). */
const watched = new Map<string, string[]>();
beforeAll(() => {
  const send = stack.mailbox.send;
  vi.spyOn(stack.mailbox, 'send').mockImplementation((runId, command) => {
    if (command.kind === 'ReplanWatchExpired') watched.set(runId, [...(watched.get(runId) ?? []), command.failure]);
    return send(runId, command);
  });
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once the run's watch has fired (and, `settle`, its command was decided): the failures it named. */
async function watchFired(
  runId: string,
  timeoutMs = (WATCH_SECONDS + 20) * 1000,
  settle = true,
): Promise<readonly string[]> {
  const started = Date.now();
  while (!watched.has(runId)) {
    if (Date.now() - started > timeoutMs) throw new Error(`the replan watch of run ${runId} did not fire`);
    await pause(100);
  }
  if (settle) await stack.settled();
  return watched.get(runId) ?? [];
}

/** The run's record once it has ended, read from the store (not through the API, which waits for the stack). */
async function endedInStore(runId: string, timeoutMs: number) {
  const started = Date.now();
  for (;;) {
    const run = await faults.raw().getRun(runId);
    if (run !== undefined && ['complete', 'failed', 'cancelled', 'paused'].includes(run.status)) return run;
    if (Date.now() - started > timeoutMs) throw new Error(`run ${runId} did not end: ${run?.status}`);
    await pause(100);
  }
}

describe('the replan watch of a final failure', () => {
  it('declines a failure the replanner never answered and ends the run failed', async () => {
    const objective = 'replan watch: every delivery failed';
    // Every delivery of StepFailed to the replanner fails before it runs: the replanner never hears of A's failure.
    const storm = handlers.fail(replannerDeliveryOf(objective), DELIVERIES);
    const runId = await runWithUnreplannableFailure(objective);
    await storm.fired;
    const failedAt = Date.now();
    // The bus has given up: the run waits for the replanner's answer with every step ended.
    const waiting = await waitForRun(stack, runId, allEnded);
    expect(waiting.status, summary(waiting)).toBe('running');
    expect((await faults.raw().getRun(runId))?.handledFailures).toEqual(['A#1']);

    const done = await waitForRun(stack, runId, ended, (WATCH_SECONDS + 20) * 1000);

    // Before: running until the run deadline, nothing open.
    expect(done.status, summary(done)).toBe('failed');
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual((WATCH_SECONDS - 1) * 1000);
    expect(done.steps.map((s) => `${s.id}=${s.status}`)).toEqual(['A=failed', 'B=blocked', 'C=succeeded']);
    expect(done.terminal?.evidence.replans).toEqual([
      expect.objectContaining({ stepId: 'A', failure: 'A#1', code: REPLAN_UNANSWERED_CODE }),
    ]);
    expect(storm.count()).toBe(DELIVERIES);
    expect(await watchFired(runId)).toEqual(['A#1']);
  }, 60_000);

  it('lets an answer that comes after the watch change nothing: the run stays failed as the watch ended it', async () => {
    const objective = 'replan watch: a late answer';
    // The replanner's delivery is held (a slow invocation) past the watch's time.
    const late = handlers.hold(replannerDeliveryOf(objective));
    const runId = await runWithUnreplannableFailure(objective);
    await late.arrived;

    // The stack does not settle while the delivery is held: the run is read from the store until it ends.
    const ending = await endedInStore(runId, (WATCH_SECONDS + 20) * 1000);
    expect(ending.status).toBe('failed');
    expect(ending.terminal?.evidence.replans).toEqual([
      expect.objectContaining({ stepId: 'A', failure: 'A#1', code: REPLAN_UNANSWERED_CODE }),
    ]);
    expect(await watchFired(runId, 0, false)).toEqual(['A#1']);

    // The replanner answers now (it finds no alternative, and declines): the failure was declined already.
    late.release();
    await stack.settled();
    expect(handlers.invocations('Replanner').filter(replannerDeliveryOf(objective).match)).toHaveLength(1);
    const after = await faults.raw().getRun(runId);
    expect(after?.status).toBe('failed');
    expect(after?.replanDeclines ?? []).toHaveLength(1);
    expect(after?.replanDeclines?.[0]).toContain(REPLAN_UNANSWERED_CODE);
    expect(after?.terminal).toEqual(ending.terminal);
  }, 60_000);

  it('leaves a failure the replanner answered as it was answered', async () => {
    const runId = await runWithUnreplannableFailure('replan watch: answered');
    const done = await waitForRun(stack, runId, ended);
    expect(done.status, summary(done)).toBe('failed');
    expect(done.terminal?.evidence.replans).toEqual([
      expect.objectContaining({ stepId: 'A', failure: 'A#1', code: 'E_NO_ALTERNATIVE' }),
    ]);

    // The watch's timer comes once its time is up, finds the failure declined by the replanner, and does nothing.
    expect(await watchFired(runId)).toEqual(['A#1']);

    const declines = (await faults.raw().getRun(runId))?.replanDeclines ?? [];
    expect(declines).toHaveLength(1);
    expect(declines[0]).not.toContain(REPLAN_UNANSWERED_CODE);
    expect((await waitForRun(stack, runId, ended)).terminal).toEqual(done.terminal);
  }, 60_000);
});
