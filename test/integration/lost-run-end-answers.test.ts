/**
 * A run's end whose write landed but whose answer was lost (`store.write:timeout` on the run's update), through the
 * embedded stack's real state machines: the repeat finds the run already ended by its own earlier write and must
 * still answer the run execution's waiter, or that execution waits until its deadline (the chaos suite's "stuck").
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { runExecutionName } from '../../shared/ports/executions.ts';
import { plan, statusOf, step, summary, waitForRun } from '../support/local-stack.ts';
import { loseRunEndAnswer, useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults, handlers } = useStackWithFaults();

/** The status of the run's (first) run execution once the stack has nothing left to do. */
async function runExecutionStatus(runId: string): Promise<string | undefined> {
  await stack.settled();
  return stack.executions.list().find((e) => e.name === runExecutionName(runId))?.status;
}

describe('a pause whose write landed but whose answer was lost', () => {
  it("answers the run execution's waiter when the repeat finds its own pause", async () => {
    const objective = 'pause answer lost';
    const lost = loseRunEndAnswer(faults, objective, { reason: 'approval_expired' });
    // Nothing but the expiry's own Task pauses this run: no step ends, so no settling answers the waiter instead.
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'G', T.approver, {
          input: { note: 'look at it' },
          approval: { question: 'May G go ahead?', timeoutSeconds: 1, onTimeout: 'pause' },
        }),
        step(stack, 'After', T.echo, { dependsOn: ['G'], input: { value: 1 } }),
      ]),
    });

    const paused = await waitForRun(stack, runId, (run) => run.terminal !== undefined, 20_000);

    expect(lost.count()).toBe(1);
    expect(paused.terminal?.reason, summary(paused)).toBe('approval_expired');
    expect(statusOf(paused, 'G')).toBe('awaiting_approval');
    // Before, the repeat saw the terminal record, returned, and the run execution waited for its deadline.
    expect(await runExecutionStatus(runId)).toBe('SUCCEEDED');
  }, 60_000);
});

describe('a failure before the start whose write landed but whose answer was lost', () => {
  it('still closes the steps a half-done StartRun had started when the failure is repeated', async () => {
    const objective = 'start failure answer lost';
    // StartRun starts both steps, then fails for good (an error no Retry matches): the run machine's FailRun follows.
    void handlers.loseAnswer(
      { key: 'Coordinator', match: (p) => p.action === 'startRun' && p.runId === faults.runIdFor(objective) },
      'Error',
    );
    const lost = loseRunEndAnswer(faults, objective, { reason: 'planning_failed' });
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.sleep, { input: { ms: 1500 } }),
        step(stack, 'B', T.sleep, { input: { ms: 1500 } }),
      ]),
    });

    await waitForRun(stack, runId, undefined, 20_000);
    await stack.settled();
    const after = await waitForRun(stack, runId, undefined, 20_000);

    expect(lost.count()).toBe(1);
    expect(after.status, summary(after)).toBe('failed');
    // Before, the repeat found the run failed and returned: the steps StartRun had started ran on and succeeded.
    expect(
      after.steps.map((s) => s.status),
      summary(after),
    ).toEqual(['cancelled', 'cancelled']);
  }, 60_000);
});

describe('a cancellation with compensation whose end landed but whose answer was lost', () => {
  it("answers the run execution's waiter when the repeat finds the run cancelled", async () => {
    const objective = 'compensated cancel answer lost';
    const lost = loseRunEndAnswer(faults, objective, { state: 'cancelled' });
    const runId = await stack.startRun({
      plan: plan(objective, [
        step(stack, 'one', T.ledger, { input: { entry: { id: 'one' } }, segment: 'release' }),
        step(stack, 'wait', T.sleep, { input: { ms: 30_000 }, dependsOn: ['one'], segment: 'release' }),
      ]),
    });
    await waitForRun(stack, runId, (run) => statusOf(run, 'wait') === 'running');

    const cancel = await stack.request('POST', `/runs/${runId}/cancel`, { compensate: true });
    const cancelled = await waitForRun(stack, runId, undefined, 20_000);

    expect(cancel.status).toBe(200);
    expect(lost.count()).toBe(1);
    expect(cancelled.status, summary(cancelled)).toBe('cancelled');
    expect(statusOf(cancelled, 'one')).toBe('compensated');
    // Before, the repeat's settling saw the run cancelled and answered nobody: the execution waited for its deadline.
    expect(await runExecutionStatus(runId)).toBe('SUCCEEDED');
  }, 60_000);
});

describe('a deadline failure whose write landed but whose answer was lost', () => {
  const { stack: short, faults: shortFaults } = useStackWithFaults({ limits: { runDeadlineSeconds: 2 } });

  it('still closes the open steps when FinalizeRun is repeated', async () => {
    const objective = 'deadline answer lost';
    const lost = loseRunEndAnswer(shortFaults, objective, { reason: 'deadline' });
    const runId = await short.startRun({
      plan: plan(objective, [step(short, 'S', T.sleep, { input: { ms: 20_000 } })]),
    });

    // Before, the repeat found the run failed and returned: S ran on in a failed run, and succeeded after it.
    const failed = await waitForRun(short, runId, (run) => run.status === 'failed' && statusOf(run, 'S') !== 'running');

    expect(lost.count()).toBe(1);
    expect(failed.terminal?.reason).toBe('deadline');
    expect(statusOf(failed, 'S'), summary(failed)).toBe('cancelled');
  }, 60_000);
});
