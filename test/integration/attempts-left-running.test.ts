/**
 * No attempt stays `running` in a finished run (the chaos suite's "attempt left running" finding). A gate's attempt
 * is recorded `running` while it waits; whoever ends the gate closes it, but one order left it open for good: the
 * gate's record landed after its run was cancelled (the cancellation looked for it before it existed).
 */
import { describe, expect, it } from 'vitest';
import type { AttemptRecord } from '../../shared/ports/store.ts';
import { gatedPlan } from '../support/gates.ts';
import { type LocalStack, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

/** The step's attempts once one is recorded and none is `running`, or as they are after `ms` (a test then fails). */
async function attemptsOnceClosed(target: LocalStack, runId: string, stepId: string, ms = 15_000) {
  const until = Date.now() + ms;
  let attempts: AttemptRecord[] = await target.store.listAttempts(runId, stepId);
  while ((attempts.length === 0 || attempts.some((a) => a.outcome === 'running')) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    attempts = await target.store.listAttempts(runId, stepId);
  }
  return attempts;
}

describe('a gate attempt in a finished run', () => {
  it('is closed by the gate itself when it was recorded after the run was cancelled', async () => {
    const objective = 'a gate recorded after its cancellation';
    const held = faults.hold({ method: 'putAttempt', match: (call) => call.runId === faults.runIdFor(objective) });
    const runId = await stack.startRun({ plan: gatedPlan(stack, objective) });
    await held.arrived;

    const cancel = await stack.request('POST', `/runs/${runId}/cancel`);
    expect(cancel.status).toBe(200);
    const done = await waitForRun(stack, runId, undefined, 30_000);
    expect(done.status, summary(done)).toBe('cancelled');
    held.release();

    const attempts = await attemptsOnceClosed(stack, runId, 'G');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ outcome: 'failed', error: { code: 'E_CANCELLED' } });
  }, 90_000);
});
