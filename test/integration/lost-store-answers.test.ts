/**
 * Store writes that land but lose their answer (`store.write:timeout`: the write reached the table, the caller
 * heard a TimeoutError), through the embedded stack's real state machines: whoever repeats the call must find its
 * own earlier write applied and go on to what follows it, or the run stays open with nothing left to move it (the
 * chaos suite's "stuck", `store.write:timeout@0.03`).
 */
import { describe, expect, it } from 'vitest';
import { ledgerEntries, CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { auditLog } from '../support/api-reads.ts';
import { plan, statusOf, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

describe('a side effect whose idempotency completion is not written', () => {
  /** A ledger step `L` between two echoes; the completion of its record is refused `times` times (a timeout). */
  async function ledgerRun(objective: string, times: number) {
    const lost = faults.throwOn({
      method: 'completeIdempotent',
      when: 'before',
      name: 'TimeoutError',
      times,
      match: (call) => {
        const runId = faults.runIdFor(objective);
        return runId !== undefined && String(call.args[0]).startsWith(`${runId}#`);
      },
    });
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.echo, { input: { value: 'a' } }),
        step(stack, 'L', T.ledger, { dependsOn: ['A'], input: { entry: objective }, rollbackHint: 'none' }),
        step(stack, 'Z', T.echo, { dependsOn: ['L'], input: { value: 'z' } }),
      ]),
    });
    const done = await waitForRun(stack, runId, undefined, 30_000);
    return { done, lost, ledger: ledgerEntries().filter((entry) => entry.runId === runId) };
  }

  it('completes the step with its side effect made once when the completion timed out before reaching the store', async () => {
    const { done, lost, ledger } = await ledgerRun('completion timed out', 1);

    expect(lost.count()).toBe(1);
    expect(done.status, summary(done)).toBe('complete');
    expect(stepOf(done, 'L').attempts).toBe(1);
    expect(ledger).toHaveLength(1);
  }, 60_000);

  it('fails the step rather than act twice when every try of the completion fails (the answer is gone)', async () => {
    // The invocation gives up and its Task is retried: the record is still in progress and nobody can say whether
    // the side effect was made, so no attempt calls it again.
    const { done, lost, ledger } = await ledgerRun('completion never written', 5);

    expect(lost.count()).toBe(5);
    expect(done.status, summary(done)).toBe('failed');
    expect(stepOf(done, 'L')).toMatchObject({ status: 'failed', error: { code: 'E_IDEMPOTENCY_IN_PROGRESS' } });
    expect(statusOf(done, 'Z')).toBe('blocked');
    expect(ledger).toHaveLength(1);
  }, 60_000);
});

describe('a reopening whose write landed but whose answer was lost', () => {
  it('goes on with the invalidation that reopened the finished run, which finishes again', async () => {
    const objective = 'reopening answer lost';
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.echo, { input: { value: 'a' } }),
        step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: 'b' } }),
      ]),
    });
    await waitForRun(stack, runId);
    const lost = faults.throwOn({
      method: 'updateRun',
      when: 'after',
      name: 'TimeoutError',
      match: (call) => call.runId === runId && (call.args[2] as { reopened?: number }).reopened === 1,
    });

    const answer = await stack.request('POST', `/runs/${runId}/steps/B/invalidate`, { reason: 'changed' });
    // Before, the invalidation stopped at the lost answer: the run was left running, B finished, nothing open.
    const again = await waitForRun(
      stack,
      runId,
      (run) => run.status === 'complete' && stepOf(run, 'B').generation === 2,
    );
    const finished = (await auditLog(stack, runId)).filter((e) => e.type === 'RunFinished');

    expect(lost.count()).toBe(1);
    expect(answer.status, JSON.stringify(answer.json)).toBe(202);
    expect(answer.json).toMatchObject({ stepIds: ['B'], reopened: true });
    expect(again.status, summary(again)).toBe('complete');
    expect(finished).toHaveLength(2);
  }, 60_000);
});

describe("the replanner's mark of a failure whose write landed but whose answer was lost", () => {
  it('answers the redelivered failure, and the run ends', async () => {
    const objective = 'failure mark answer lost';
    const lost = faults.throwOn({
      method: 'markRunOnce',
      when: 'after',
      name: 'TimeoutError',
      match: (call) => call.runId === faults.runIdFor(objective) && call.args[1] === 'handledFailures',
    });
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.echo, { input: { value: 'a' } }),
        step(stack, 'F', T.fail, { dependsOn: ['A'], input: { message: 'no', retryable: false } }),
      ]),
    });

    // Before, the redelivery found the mark, took the failure for a duplicate, and the run waited for a replan.
    const done = await waitForRun(stack, runId, undefined, 20_000);

    expect(lost.count()).toBe(1);
    expect(done.status, summary(done)).toBe('failed');
    expect(statusOf(done, 'F')).toBe('failed');
  }, 60_000);
});
