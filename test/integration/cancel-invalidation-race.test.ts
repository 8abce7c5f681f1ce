/**
 * Once a cancellation has begun, no attempt of its run starts (issue 10): an invalidation that read the run before the
 * cancel's mark and lands between its close of the open steps and its end write (RunFinished) starts a new generation
 * the cancel never saw. That generation's claim must refuse, so it neither runs nor announces anything, and the
 * generation is closed (by the cancel afterwards, or by the refused claim, which finishes the cancel).
 * The cancel runs in a second process whose store holds it after the close until the new generation's execution ended.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createCoordinator } from '../../shared/services/coordinator.ts';
import { createInterpreter } from '../../shared/services/interpreter.ts';
import { invalidateInRun } from '../../shared/services/invalidation-run.ts';
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

/**
 * Cancels the run (`compensate` as asked) while an invalidation of A that read the run before the cancel marked it
 * (a fresh one is refused: see cancel-marked-run) lands between the close and the end write, and waits for the
 * generation it started to end. Returns the run once it ended and its audit log.
 */
async function cancelRacingInvalidation(runId: string, compensate: boolean) {
  const before = await stack.store.getRun(runId);
  if (!before) throw new Error(`no run ${runId}`);
  const invalidation = createInterpreter(secondProcessDeps(stack));
  const store = storeHoldingEnd(runId, async () => {
    await invalidateInRun(invalidation, before, ['A'], 'stale');
    await executionEnded(stack, `${runId}-A-g2`);
  });
  const coordinator = createCoordinator(secondProcessDeps(stack, store));

  await coordinator.cancelRun(runId, { requestedBy: 'test', compensate });

  const done = await waitForRun(stack, runId);
  await stack.settled();
  const log = (await auditLog(stack, runId)).map((e) => `${e.type}${e.stepId ? ` ${e.stepId}` : ''}`);
  return { done, log };
}

describe('a cancel racing an invalidation', () => {
  it('starts no attempt of a generation the invalidation started between the close and the end write', async () => {
    const steps: PlanStep[] = [
      step(stack, 'A', T.echo, { input: { value: 'a' } }),
      step(stack, 'S', T.sleep, { input: { ms: 20_000 } }),
    ];
    const runId = await stack.startRun({ plan: plan('cancel racing an invalidation', steps) });
    await waitForRun(stack, runId, (run) => run.steps.find((s) => s.id === 'A')?.status === 'succeeded');

    const { done, log } = await cancelRacingInvalidation(runId, false);

    expect(done.status, summary(done)).toBe('cancelled');
    expect(done.steps.find((s) => s.id === 'A')?.status, summary(done)).toBe('cancelled');
    expect(
      log.filter((e) => e === 'StepStarted A'),
      log.join(' '),
    ).toHaveLength(1);
    expect(log.at(-1), log.join(' ')).toBe('RunFinished');
  });

  it('starts none either when the cancel compensates first: it marks the run the same way', async () => {
    const steps: PlanStep[] = [
      step(stack, 'A', T.echo, { input: { value: 'a' } }),
      step(stack, 'L', T.ledger, { input: { entry: { id: 'L' } }, segment: 'release' }),
      step(stack, 'S', T.sleep, { input: { ms: 20_000 } }),
    ];
    const runId = await stack.startRun({ plan: plan('compensating cancel racing an invalidation', steps) });
    await waitForRun(stack, runId, (run) =>
      ['A', 'L'].every((id) => run.steps.find((s) => s.id === id)?.status === 'succeeded'),
    );

    const { done, log } = await cancelRacingInvalidation(runId, true);

    expect(done.status, summary(done)).toBe('cancelled');
    expect(done.steps.find((s) => s.id === 'L')?.status, summary(done)).toBe('compensated');
    expect(done.steps.find((s) => s.id === 'A')?.status, summary(done)).toBe('cancelled');
    expect(
      log.filter((e) => e === 'StepStarted A'),
      log.join(' '),
    ).toHaveLength(1);
    expect(log.at(-1), log.join(' ')).toBe('RunFinished');
  });
});
