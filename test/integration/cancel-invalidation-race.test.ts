/**
 * Once a cancellation has begun, no attempt of its run starts (issue 10): an invalidation that lands between the
 * cancel's close of the open steps and its end write (RunFinished) starts a new generation the cancel never saw. That
 * generation's claim must refuse, so it neither runs nor announces anything, and the cancel closes it afterwards.
 * The cancel runs in a second process whose store holds it after the close until the new generation's execution ended.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createCoordinator } from '../../shared/services/coordinator.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import { auditLog } from '../support/api-reads.ts';
import { executionEnded, plan, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';
import { interceptStore, secondProcessDeps } from '../support/second-process.ts';

const stack = useTestStack();

/**
 * The stack's store, with `between` run once right after the cancel's first read of the run's approvals: its close
 * of the open steps has written them, and the run's end is not yet written (nor its time taken).
 */
function storeHoldingEnd(runId: string, between: () => Promise<void>): Store {
  let fired = false;
  return interceptStore(stack.store, ['listRunApprovals'], async (call, args) => {
    const result = await call();
    if (!fired && args[0] === runId) {
      fired = true;
      await between();
    }
    return result;
  });
}

describe('a cancel racing an invalidation', () => {
  it('starts no attempt of a generation the invalidation started between the close and the end write', async () => {
    const steps: PlanStep[] = [
      step(stack, 'A', T.echo, { input: { value: 'a' } }),
      step(stack, 'S', T.sleep, { input: { ms: 20_000 } }),
    ];
    const runId = await stack.startRun({ plan: plan('cancel racing an invalidation', steps) });
    await waitForRun(stack, runId, (run) => run.steps.find((s) => s.id === 'A')?.status === 'succeeded');
    const invalidator = createInvalidator(secondProcessDeps(stack));
    const store = storeHoldingEnd(runId, async () => {
      await invalidator.invalidateStep({ runId, stepId: 'A', reason: 'stale' });
      await executionEnded(stack, `${runId}-A-g2`);
    });
    const coordinator = createCoordinator(secondProcessDeps(stack, store));

    await coordinator.cancelRun(runId, { requestedBy: 'test' });

    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('cancelled');
    expect(done.steps.find((s) => s.id === 'A')?.status, summary(done)).toBe('cancelled');
    await stack.settled();
    const log = (await auditLog(stack, runId)).map((e) => `${e.type}${e.stepId ? ` ${e.stepId}` : ''}`);
    expect(
      log.filter((e) => e === 'StepStarted A'),
      log.join(' '),
    ).toHaveLength(1);
    expect(log.at(-1), log.join(' ')).toBe('RunFinished');
  });
});
