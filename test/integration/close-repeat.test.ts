/**
 * Closing a run's open steps is repeatable part-way: the first try moved a waiting gate to `cancelled`, then the
 * write closing its attempt was throttled; the repeat lists only open steps, so before, the gate's attempt stayed
 * `running` for good in a cancelled run (the chaos suite's "attempt left running" finding).
 */
import { describe, expect, it } from 'vitest';
import { waitingGate } from '../support/gates.ts';
import { summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

describe('closing open steps', () => {
  it('closes the attempt of a step the first try cancelled when the repeat no longer finds it open', async () => {
    const objective = 'a gate whose attempt close is throttled';
    const { runId } = await waitingGate(stack, objective);
    const armed = faults.throwOn({
      method: 'updateAttempt',
      when: 'before',
      match: (call) => call.runId === runId,
    });

    const first = await stack.request('POST', `/runs/${runId}/cancel`);
    expect(armed.count()).toBe(1);
    // A client repeats a cancel the platform failed (503); one that was taken needs no repeat.
    if (first.status >= 500) expect((await stack.request('POST', `/runs/${runId}/cancel`)).status).toBeLessThan(300);

    const done = await waitForRun(stack, runId, undefined, 60_000);
    expect(done.status, summary(done)).toBe('cancelled');
    const attempts = await stack.store.listAttempts(runId, 'G');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      outcome: 'failed',
      error: { code: 'E_CANCELLED' },
      evidence: { gate: true, ending: 'cancelled' },
    });
  }, 90_000);
});
