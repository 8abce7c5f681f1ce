/**
 * A side effect's idempotency record whose completion lands but loses its answer (`store.write:timeout`: the write
 * reached the table, the caller heard a TimeoutError), through the embedded stack's real state machines: the step's
 * execution owns that record, so its repeat must find its own write and act once. A run's own writes (its batches)
 * losing their answers are the simulation's (bench/sim: a commit or a projection that lands and throws).
 */
import { describe, expect, it } from 'vitest';
import { ledgerEntries, CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
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
