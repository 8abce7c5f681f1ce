/**
 * The replanner's answer to a final StepFailed, tried again, through the embedded stack (its own replanner, on the
 * bus's three deliveries, and the run's mailbox). The run waits for that answer with every step ended, and once
 * stayed `running` for good when the answer's writes were throttled past the replanner's tries (chaos seed 22 run
 * 9: "the stack went quiet with the run open"). The replanner writes nothing now: it sends its answer to the run's
 * decider, which records it once however often it comes. What is tried again is the delivery (the bus), and the
 * decider's batch (the mailbox takes a batch again when its records' writes fail after its commit).
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Plan } from '../../shared/plan/schema.ts';
import { plan, type RunView, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { createReplanPack, PROVIDERS } from '../support/replan-pack.ts';
import { type Payload, useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults, handlers } = useStackWithFaults({
  extraCapabilities: createReplanPack(),
  limits: { maxReplans: 3 },
});

/** The bus's deliveries of one event (infra/local/bus-rules.ts). */
const DELIVERIES = 3;

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

/** The bus's deliveries of the objective's run's failure of `stepId` to the replanner. */
const replannerDeliveryOf = (objective: string, stepId = 'A') => ({
  key: 'Replanner',
  match: (payload: Payload) => {
    const detail = payload.detail as { runId?: string; stepId?: string } | undefined;
    return detail?.runId === faults.runIdFor(objective) && detail?.stepId === stepId;
  },
});
const deliveriesOf = (objective: string, stepId = 'A') =>
  handlers.invocations('Replanner').filter((payload) => replannerDeliveryOf(objective, stepId).match(payload));

async function revisions(runId: string): Promise<number[]> {
  const { json } = await stack.request('GET', `/runs/${runId}/revisions`);
  return (json as { revisions: { revision: number }[] }).revisions.map((r) => r.revision);
}

describe("the replanner's answer to a final failure, tried again", () => {
  it('makes one revision when the batch that made it failed after its commit and was decided again', async () => {
    const objective = 'replan answer: a revision decided twice';
    // The revision's batch commits, then a write of its records times out after it landed: the mailbox takes the
    // batch again, and the replanner's ProposeRevision is decided a second time on the run that already made it.
    const lost = faults.throwOn({
      method: 'putPlanRevision',
      when: 'after',
      name: 'TimeoutError',
      match: (call) => call.runId === faults.runIdFor(objective) && (call.args[1] as Plan).revision === 2,
    });
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'B', PROVIDERS.primary, { input: { value: 'B', fail: ['primary'] } }),
        step(stack, 'C', T.echo, { dependsOn: ['B'], input: { value: 'c' } }),
      ]),
    });

    const done = await waitForRun(stack, runId, ended, 30_000);

    expect(done.status, summary(done)).toBe('complete');
    expect(lost.count()).toBe(1);
    expect(await revisions(runId)).toEqual([1, 2]);
    expect((await faults.raw().getRun(runId))?.replans).toBe(1);
    expect(stepOf(done, 'B')).toMatchObject({ status: 'succeeded', generation: 2, output: { provider: 'secondary' } });
    // Decided again, the proposal finds its failure answered: the replanner is not told to try again.
    expect(deliveriesOf(objective, 'B')).toHaveLength(1);
  }, 60_000);

  it("answers a person's replan with the revision it made when its batch was decided again", async () => {
    const objective = 'replan answer: a request decided twice';
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'S', PROVIDERS.primary, { input: { value: 'S', fail: ['primary', 'secondary'] } }),
      ]),
    });
    const paused = await waitForRun(stack, runId, ended, 30_000);
    expect(paused.status, summary(paused)).toBe('paused');
    const lost = faults.throwOn({
      method: 'putPlanRevision',
      when: 'after',
      name: 'TimeoutError',
      match: (call) => call.runId === runId && (call.args[1] as Plan).revision === 3,
    });

    const asked = await stack.request('POST', `/runs/${runId}/replan`, { reason: 'try the third provider' });
    expect(asked.status).toBe(202);
    await stack.settled();
    const { json: job } = await stack.request('GET', `/plans/${(asked.json as { jobId: string }).jobId}`);

    // Decided a second time, the same request's proposal is answered as the first time: made, not stale.
    expect(lost.count()).toBe(1);
    expect(job).toMatchObject({ status: 'succeeded', revision: 3 });
    const done = await waitForRun(stack, runId, ended, 30_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(stepOf(done, 'S')).toMatchObject({ generation: 3, output: { provider: 'tertiary' } });
    expect(await revisions(runId)).toEqual([1, 2, 3]);
  }, 60_000);

  it('declines the failure once when the replanner answered on every delivery and its answer was lost', async () => {
    const objective = 'replan answer: decline repeated';
    // The replanner answers, then its invocation fails: the bus delivers the failure again, and it answers again.
    const lost = Promise.all([
      handlers.loseAnswer(replannerDeliveryOf(objective)),
      handlers.loseAnswer(replannerDeliveryOf(objective)),
    ]);
    const runId = await runWithUnreplannableFailure(objective);

    const done = await waitForRun(stack, runId, ended, 30_000);
    await lost;

    expect(done.status, summary(done)).toBe('failed');
    expect(deliveriesOf(objective)).toHaveLength(DELIVERIES);
    expect(done.steps.map((s) => `${s.id}=${s.status}`)).toEqual(['A=failed', 'B=blocked', 'C=succeeded']);
    expect(done.terminal?.evidence.replans).toEqual([
      expect.objectContaining({ stepId: 'A', failure: 'A#1', code: 'E_NO_ALTERNATIVE' }),
    ]);
    expect((await faults.raw().getRun(runId))?.replanDeclines).toHaveLength(1);
  }, 60_000);

  it('answers the failure on the last delivery when the ones before failed before they ran', async () => {
    const objective = 'replan answer: deliveries failed';
    const failed = handlers.fail(replannerDeliveryOf(objective), DELIVERIES - 1);
    const runId = await runWithUnreplannableFailure(objective);

    const done = await waitForRun(stack, runId, ended, 30_000);

    // Answered by the replanner (not by the replan watch, E_REPLAN_UNANSWERED, 20 s on): the run ends at once.
    expect(done.status, summary(done)).toBe('failed');
    expect(failed.count()).toBe(DELIVERIES - 1);
    expect(deliveriesOf(objective)).toHaveLength(DELIVERIES);
    expect(done.terminal?.evidence.replans).toEqual([
      expect.objectContaining({ stepId: 'A', failure: 'A#1', code: 'E_NO_ALTERNATIVE' }),
    ]);
  }, 60_000);
});
