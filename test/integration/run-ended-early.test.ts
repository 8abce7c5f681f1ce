/**
 * Runs that end while steps are open, through the embedded stack's real state machines, as the chaos suite found
 * them under faults (`npm run chaos -- --runs 200`, every point at 2–5 %):
 * - a StartRun that spent its Retry after it moved the run to running and started steps takes the Task's Catch to
 *   FailRun: the run fails, and the steps it started must be closed even when FailRun's answer is lost and it is
 *   tried again (before, a repeat found the run failed and did nothing: a step ran on, and succeeded, after
 *   RunFinished; now the run's decider fails it and closes its steps in one batch, and a repeat decides nothing);
 * - a finished run whose open steps were closed with it (here by a step's `onFailure: fail-run`) and that an
 *   invalidation reopens must finish again: the closed steps never reached the run's frontier, so once the new
 *   generations ended nobody looked at the run and it stayed `running` with nothing open.
 */
import { describe, expect, it } from 'vitest';
import type { LocalHandler } from '../../infra/local/local-executions.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { type AuditEvent, auditLog } from '../support/api-reads.ts';
import { plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

/** Runs whose StartRun loses its answer on every try (the work is done, Step Functions hears the function died). */
const startLost = new Set<string>();
/** Runs whose next FailRun loses its answer once, and how many FailRun answers were lost so far. */
const failLost = new Set<string>();
let failRunsLost = 0;

const losingStartRun =
  (key: string, handler: LocalHandler): LocalHandler =>
  async (payload) => {
    const fields = payload as { action?: string; runId?: string };
    const runId = fields.runId ?? '';
    if (key === 'Coordinator' && fields.action === 'failRun' && failLost.delete(runId)) {
      await handler(payload);
      failRunsLost += 1;
      const error = new Error('injected: the answer of FailRun was lost');
      error.name = 'Lambda.ServiceException';
      throw error;
    }
    if (key !== 'Coordinator' || fields.action !== 'startRun' || !startLost.has(runId)) return handler(payload);
    await handler(payload);
    // The function died after its work (Lambda.Unknown): retried, then caught. A service error or a throttle would
    // instead wait for capacity until the run's deadline (infra/constructs/state-machines.ts, CAPACITY_ERRORS).
    const error = new Error('injected: the answer of StartRun was lost');
    error.name = 'Lambda.Unknown';
    throw error;
  };

const { stack, faults } = useStackWithFaults({ wrapHandler: losingStartRun });

interface EventView extends AuditEvent {
  readonly at: string;
}

/** Events later than the run's last RunFinished. */
function afterFinish(events: readonly EventView[]): string[] {
  const finished = events.filter((e) => e.type === 'RunFinished').at(-1);
  if (!finished) return [];
  return events.filter((e) => e.at > finished.at).map((e) => `${e.type} ${e.stepId ?? ''}`);
}

describe('a run whose StartRun spent its retries after starting steps', () => {
  it('fails with its started steps closed, nothing announced after RunFinished, though FailRun was tried again', async () => {
    const objective = 'start run spent';
    const held = faults.hold({
      method: 'createRun',
      match: (call) => (call.args[0] as { objective?: string }).objective === objective,
    });
    const starting = stack.startRun({
      plan: plan(objective, [
        step(stack, 'A', T.sleep, { input: { ms: 1500 } }),
        step(stack, 'B', T.echo, { dependsOn: ['A'], input: { value: 'b' } }),
      ]),
    });
    await held.arrived;
    startLost.add(faults.runIdFor(objective) ?? '');
    failLost.add(faults.runIdFor(objective) ?? '');
    held.release();
    const runId = await starting;

    const done = await waitForRun(stack, runId, undefined, 30_000);
    // Long enough for A's sleep to have ended, had it run on.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await stack.settled();
    const after = await waitForRun(stack, runId, undefined, 5_000);
    const events = await auditLog<EventView>(stack, runId);

    expect(failRunsLost).toBe(1);
    expect(done.terminal).toMatchObject({ state: 'failed', reason: 'planning_failed' });
    expect(after.status, summary(after)).toBe('failed');
    expect(stepOf(after, 'A').status, summary(after)).toBe('cancelled');
    expect(stepOf(after, 'B').status, summary(after)).toBe('cancelled');
    expect(afterFinish(events)).toEqual([]);
  }, 60_000);
});

describe('a run failed by a fail-run step and reopened by an invalidation', () => {
  it('finishes again once the invalidated step has run, though its other sinks were closed with the run', async () => {
    const runId = await stack.startRun({
      plan: plan('fail-run then reopened', [
        step(stack, 'Z', T.echo, { input: { value: 'z' } }),
        step(stack, 'X', T.fail, {
          input: { message: 'no', retryable: false },
          maxRetries: 0,
          onFailure: 'fail-run',
        }),
        step(stack, 'Y', T.sleep, { input: { ms: 3000 } }),
      ]),
    });
    const failed = await waitForRun(stack, runId);
    expect(failed.terminal, summary(failed)).toMatchObject({ state: 'failed' });
    expect(stepOf(failed, 'Y').status).toBe('cancelled');

    const answer = await stack.request('POST', `/runs/${runId}/steps/Z/invalidate`, { reason: 'changed' });
    expect(answer.status, JSON.stringify(answer.json)).toBe(202);
    // Before, the run stayed running once Z had run again: X and Y, sinks that ended without a look at the run
    // (failed under fail-run, closed with the run), were never on its frontier.
    const again = await waitForRun(
      stack,
      runId,
      (run) => run.status === 'failed' && stepOf(run, 'Z').generation === 2,
      20_000,
    );

    expect(stepOf(again, 'Z')).toMatchObject({ status: 'succeeded', generation: 2 });
    expect(stepOf(again, 'X')).toMatchObject({ status: 'failed', generation: 1 });
    expect(stepOf(again, 'Y')).toMatchObject({ status: 'cancelled', generation: 1 });
    expect(again.terminal).toMatchObject({ state: 'failed', reason: 'step_failed' });
  }, 60_000);
});
