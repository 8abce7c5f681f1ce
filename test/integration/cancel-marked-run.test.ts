/**
 * A cancel that dies between its mark and its close (issue 10): the run is marked `cancelling` (no attempt starts),
 * then every write that would close a step fails and the client gives up. Such a run is refused an invalidation as a
 * cancelled run is (the API and a resource change alike), its own machinery finishes the cancel once a claim the mark
 * refused comes along, and a repeated cancel finishes it whatever else happened.
 * The cancel runs in a second process whose store fails every step transition of the run as a crash would (a
 * throttle it outlives: the cancel through the API tries again in place, last case).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createCoordinator } from '../../shared/services/coordinator.ts';
import { auditLog, decide, pendingApproval } from '../support/api-reads.ts';
import { plan, statusOf, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { injectedCrash, interceptStore, secondProcessDeps } from '../support/second-process.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults, handlers } = useStackWithFaults();

/** The stack's store, except that no step of `runId` can be moved: a cancel through it marks the run, then dies. */
const storeFailingCloses = (runId: string): Store =>
  interceptStore(stack.store, ['transitionStep'], async (call, args) => {
    if (args[0] === runId) throw injectedCrash();
    return call();
  });

/** Cancels `runId` through a process whose closes all fail: the run is left marked and running. */
async function cancelThatDies(runId: string): Promise<void> {
  const coordinator = createCoordinator(secondProcessDeps(stack, storeFailingCloses(runId)));
  await expect(coordinator.cancelRun(runId, { requestedBy: 'dying-cancel' })).rejects.toThrow(/process died/);
  const run = await stack.store.getRun(runId);
  expect(run).toMatchObject({ status: 'running', cancelling: true });
}

/** The run's status and cancel mark as `GET /runs/{id}` and its entry in `GET /runs` show them. */
async function views(runId: string): Promise<{ status?: string; cancelling?: boolean }[]> {
  const pick = (view: { status?: string; cancelling?: boolean } | undefined) => ({
    status: view?.status,
    ...(view?.cancelling === undefined ? {} : { cancelling: view.cancelling }),
  });
  const one = await stack.request('GET', `/runs/${runId}`);
  const all = await stack.request('GET', '/runs?limit=100');
  const listed = (all.json as { runs: { runId: string; status: string; cancelling?: boolean }[] }).runs;
  return [pick(one.json as { status: string }), pick(listed.find((r) => r.runId === runId))];
}

const events = async (runId: string): Promise<string[]> =>
  (await auditLog(stack, runId)).map((e) => `${e.type}${e.stepId ? ` ${e.stepId}` : ''}`);

describe('a run whose cancel died after marking it', () => {
  it('refuses an invalidation through the API (409, as for a cancelled run) and a resource change leaves it alone', async () => {
    const key = `repo:${randomUUID()}`;
    const steps: PlanStep[] = [
      step(stack, 'A', T.echo, { input: { value: 'a' }, watches: [key] }),
      step(stack, 'S', T.sleep, { input: { ms: 4_000 } }),
    ];
    const runId = await stack.startRun({ plan: plan('a marked run takes no invalidation', steps) });
    await waitForRun(stack, runId, (run) => statusOf(run, 'A') === 'succeeded');
    await cancelThatDies(runId);

    await stack.bus.publish([
      { detailType: 'ResourceChanged', detail: { resourceKey: key, source: 'github', deliveryId: randomUUID() } },
    ]);
    await stack.bus.drain();
    const afterChange = await stack.store.getStep(runId, 'A');
    const answer = await stack.request('POST', `/runs/${runId}/steps/A/invalidate`, { reason: 'stale' });

    expect(afterChange).toMatchObject({ generation: 1, status: 'succeeded' });
    expect(answer.status, JSON.stringify(answer.json)).toBe(409);
    expect(answer.json).toMatchObject({ error: { code: 'E_CONFLICT' } });
    expect(await stack.store.getStep(runId, 'A')).toMatchObject({ generation: 1, status: 'succeeded' });
    expect((await events(runId)).filter((e) => e.startsWith('StepsInvalidated'))).toEqual([]);
  });

  it('is finished by a repeated cancel: its open steps closed, the run cancelled, RunFinished last', async () => {
    const steps: PlanStep[] = [step(stack, 'S', T.sleep, { input: { ms: 4_000 } })];
    const runId = await stack.startRun({ plan: plan('a repeated cancel finishes', steps) });
    await waitForRun(stack, runId, (run) => statusOf(run, 'S') === 'running');
    await cancelThatDies(runId);
    const marked = await views(runId);

    const answer = await stack.request('POST', `/runs/${runId}/cancel`);

    expect(answer).toMatchObject({ status: 200, json: { runId, status: 'cancelled' } });
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('cancelled');
    expect(stepOf(done, 'S').status).toBe('cancelled');
    expect((await events(runId)).at(-1)).toBe('RunFinished');
    // The views tell a marked run apart while its cancel is not through, and stop once it is.
    expect(marked).toEqual([
      { status: 'running', cancelling: true },
      { status: 'running', cancelling: true },
    ]);
    expect(await views(runId)).toEqual([{ status: 'cancelled' }, { status: 'cancelled' }]);
  });

  it('is finished by its own machinery once a claim the mark refused comes along, without waiting for the deadline', async () => {
    const steps: PlanStep[] = [
      step(stack, 'A', T.sleep, { input: { ms: 1_500 } }),
      step(stack, 'B', T.echo, { input: { value: 'b' }, dependsOn: ['A'] }),
    ];
    const runId = await stack.startRun({ plan: plan('a refused claim finishes the cancel', steps) });
    await waitForRun(stack, runId, (run) => statusOf(run, 'A') === 'running');
    await cancelThatDies(runId);

    // A ends after the mark; its release readies B, whose claim the mark refuses.
    const done = await waitForRun(stack, runId, undefined, 15_000);

    expect(done.status, summary(done)).toBe('cancelled');
    expect(stepOf(done, 'B').status, summary(done)).toBe('cancelled');
    const log = await events(runId);
    expect(
      log.filter((e) => e === 'StepStarted B'),
      log.join(' '),
    ).toEqual([]);
    expect(log.at(-1), log.join(' ')).toBe('RunFinished');
    const run = await stack.store.getRun(runId);
    expect(run?.terminal?.evidence).toMatchObject({ requestedBy: 'dying-cancel' });
  });

  it('is finished by a side effect its mark kept from starting: the step closed, no ledger entry made', async () => {
    // The step is claimed and about to act (its idempotency record is being taken) when the cancel marks the run.
    const acting = faults.hold({ method: 'beginIdempotent', match: (call) => String(call.args[0]).includes('#P#') });
    const runId = await stack.startRun({
      plan: plan('a refused side effect finishes the cancel', [
        step(stack, 'P', T.ledger, { input: { entry: 'p' }, rollbackHint: 'remove the entry' }),
      ]),
    });
    await acting.arrived;
    await cancelThatDies(runId);

    acting.release();
    const done = await waitForRun(stack, runId, undefined, 15_000);

    expect(done.status, summary(done)).toBe('cancelled');
    expect(stepOf(done, 'P')).toMatchObject({ status: 'cancelled', output: null });
    const { json } = await stack.request('GET', '/conformance/ledger');
    expect((json as { entries: { runId: string }[] }).entries.filter((e) => e.runId === runId)).toEqual([]);
    const log = await events(runId);
    expect(log.at(-1), log.join(' ')).toBe('RunFinished');
  });

  it('starts no retry of a step once the mark is written, and the refused retry finishes the cancel', async () => {
    // Attempt 1 failed (retryably); its retry comes once the backoff is over, after the cancel marked the run.
    const retry = handlers.hold({
      key: 'StepExecutor',
      match: (payload) =>
        payload.stepId === 'F' && (payload.previous as { action?: string } | null)?.action === 'retry',
    });
    const runId = await stack.startRun({
      plan: plan('no retry after the mark', [
        step(stack, 'F', T.flaky, { input: { key: `flaky-${randomUUID()}`, failures: 1 } }),
      ]),
    });
    await retry.arrived;
    await cancelThatDies(runId);

    retry.release();
    const done = await waitForRun(stack, runId, undefined, 15_000);

    expect(done.status, summary(done)).toBe('cancelled');
    expect(stepOf(done, 'F'), summary(done)).toMatchObject({ status: 'cancelled', attempts: 1 });
    const attempts = await stack.store.listAttempts(runId);
    expect(attempts.map((a) => `${a.attempt}:${a.outcome}`)).toEqual(['1:failed']);
    const log = await events(runId);
    expect(log.at(-1), log.join(' ')).toBe('RunFinished');
  });

  it('is not ended by a look at it while a step is in flight: nothing of it is announced after RunFinished', async () => {
    // X's failure (it blocks the sink C) lands after the mark, while Y still runs: the look at the run it makes must
    // not end the run under Y, whose success would then be announced after the end.
    const failing = faults.hold({
      method: 'transitionStep',
      match: (call) => call.args[1] === 'X' && (call.args[3] as { status?: string } | undefined)?.status === 'failed',
    });
    const runId = await stack.startRun({
      plan: plan('no end under a step in flight', [
        step(stack, 'X', T.fail, { input: { message: 'x fails', retryable: false } }),
        step(stack, 'Y', T.sleep, { input: { ms: 1_500 } }),
        step(stack, 'C', T.echo, { input: { value: 'c' }, dependsOn: ['X', 'Y'] }),
      ]),
    });
    await failing.arrived;
    await cancelThatDies(runId);

    failing.release();
    const done = await waitForRun(stack, runId, undefined, 15_000);

    expect(done.status, summary(done)).toBe('cancelled');
    const log = await events(runId);
    expect(log.at(-1), log.join(' ')).toBe('RunFinished');
  });
});

describe('a gate in a run whose cancel died after marking it', () => {
  it('takes no decision (409 E_RUN_CANCELLED) and the decision finishes the cancel, gate closed', async () => {
    const steps: PlanStep[] = [
      step(stack, 'G', T.approver, { approval: { question: 'May G go?', timeoutSeconds: 120 } }),
    ];
    const runId = await stack.startRun({ plan: plan('a decision in a marked run', steps) });
    await waitForRun(stack, runId, (run) => statusOf(run, 'G') === 'awaiting_approval');
    const approval = await pendingApproval(stack, runId, 'G');
    await cancelThatDies(runId);

    const answer = await decide(stack, approval, { decision: 'approve' });

    expect(answer).toMatchObject({ status: 409, json: { error: { code: 'E_RUN_CANCELLED' } } });
    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('cancelled');
    expect(stepOf(done, 'G').status, summary(done)).toBe('cancelled');
    expect((await events(runId)).filter((e) => e.startsWith('ApprovalDecided'))).toEqual([]);
    expect((await events(runId)).at(-1)).toBe('RunFinished');
  });
});

describe('a cancel through the API', () => {
  it('ends the run though closes it made were throttled: it is tried again in place, not left marked', async () => {
    const steps: PlanStep[] = [step(stack, 'S', T.sleep, { input: { ms: 4_000 } })];
    const runId = await stack.startRun({ plan: plan('a throttled cancel is tried again', steps) });
    await waitForRun(stack, runId, (run) => statusOf(run, 'S') === 'running');
    const throttled = faults.throwOn({
      method: 'transitionStep',
      when: 'before',
      match: (call) => call.runId === runId,
      times: 2,
    });

    const answer = await stack.request('POST', `/runs/${runId}/cancel`);

    expect(throttled.count()).toBe(2);
    expect(answer).toMatchObject({ status: 200, json: { runId, status: 'cancelled' } });
    const done = await waitForRun(stack, runId);
    expect(stepOf(done, 'S').status, summary(done)).toBe('cancelled');
    expect((await events(runId)).at(-1)).toBe('RunFinished');
  });
});
