/**
 * A run reopened after a cancel that lost its end (issue 10, chaos seed 44 run 65): the cancel marked the run and
 * closed its open steps `cancelled` (E_CANCELLED), its own end write lost to the run machine's FailRun, and an
 * invalidation then reopened the failed run, which clears the mark. The step the cancel closed stays in the run. A
 * look at the run's end took that step for a cancel under way and ended the reopened run `cancelled` while another
 * step was still waiting. Whether a run is being cancelled is the cancel's mark, one fact read in one place.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { createInterpreter } from '../../shared/services/interpreter.ts';
import { CANCELLED_ERROR, settleRun } from '../../shared/services/run-end.ts';
import { untilAwaitingApproval } from '../support/gates.ts';
import { plan, step, useTestStack } from '../support/local-stack.ts';
import { secondProcessDeps } from '../support/second-process.ts';

const stack = useTestStack();

const gate = (id: string) =>
  step(stack, id, T.approver, { approval: { question: `May ${id} go ahead?`, timeoutSeconds: 120 } });

describe('the end of a run holding a step an earlier cancel closed', () => {
  it('leaves the run running while another step waits when the run carries no cancel mark', async () => {
    const runId = await stack.startRun({
      plan: plan('a cancel-closed step in a reopened run', [gate('G1'), gate('G2')]),
    });
    await untilAwaitingApproval(stack, runId, 'G1');
    await untilAwaitingApproval(stack, runId, 'G2');
    // What the lost cancel left behind once the run was reopened: G1 closed by it, the run running without the mark.
    const g1 = await stack.store.getStep(runId, 'G1');
    const closed = await stack.store.transitionStep(
      runId,
      'G1',
      { generation: g1?.generation ?? 1, from: ['awaiting_approval'] },
      { status: 'cancelled', error: CANCELLED_ERROR, finishedAt: new Date().toISOString() },
    );
    expect(closed?.status).toBe('cancelled');
    const before = await stack.store.getRun(runId);
    expect(before?.cancelling).toBeUndefined();

    await settleRun(createInterpreter(secondProcessDeps(stack)), runId);

    const run = await stack.store.getRun(runId);
    expect(run?.status).toBe('running');
    expect((await stack.store.getStep(runId, 'G2'))?.status).toBe('awaiting_approval');
  }, 30_000);
});
