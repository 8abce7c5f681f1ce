/**
 * A run that ends under an invalidation's moves by a way that closes what is open (issue 10, chaos seed 60 run 87):
 * the run machine's FailRun (StartRun's Retry spent on throttles) closed the open steps, the generations the
 * invalidation had just started among them, then wrote the run `failed`; the invalidation, reading the run again,
 * reopened it and announced its steps. Before, those steps stayed `cancelled` in their new generation and what
 * waited for them `pending`: the reopened run stayed `running` until its deadline. The generations the ending closed
 * now move once more, and the run ends again.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { createCoordinator } from '../../shared/services/coordinator.ts';
import { createInterpreter } from '../../shared/services/interpreter.ts';
import { invalidateInRun } from '../../shared/services/invalidation-run.ts';
import { plan, statusOf, step, stepOf, summary, useTestStack, waitForRun } from '../support/local-stack.ts';
import { interceptStore, secondProcessDeps } from '../support/second-process.ts';

const stack = useTestStack();

describe('an invalidation under which the run ends, its open steps closed', () => {
  it('moves the generations the ending closed once more after it reopens the run, which ends again', async () => {
    const echo = (id: string, dependsOn: string[] = []) => step(stack, id, T.echo, { input: { value: id }, dependsOn });
    const runId = await stack.startRun({
      plan: plan('a run ended under an invalidation', [
        echo('A'),
        echo('B', ['A']),
        echo('C', ['B']),
        step(stack, 'S', T.approver, { approval: { question: 'May S go?', timeoutSeconds: 120 } }),
      ]),
    });
    await waitForRun(
      stack,
      runId,
      (run) =>
        ['A', 'B', 'C'].every((id) => statusOf(run, id) === 'succeeded') && statusOf(run, 'S') === 'awaiting_approval',
    );
    const before = await stack.store.getRun(runId);
    if (!before) throw new Error(`no run ${runId}`);
    // Once the three moves have landed, the run machine's FailRun ends the run, closing every open step.
    let landed = 0;
    const store = interceptStore(stack.store, ['startGeneration'], async (call, args) => {
      const result = await call();
      if (args[0] === runId && ++landed === 3) await createCoordinator(secondProcessDeps(stack)).failRun({ runId });
      return result;
    });

    const invalidation = await invalidateInRun(
      createInterpreter(secondProcessDeps(stack, store)),
      before,
      ['A'],
      'stale',
      {
        key: 'invalidation#ended-under',
      },
    );

    expect(invalidation).toMatchObject({ stepIds: ['A', 'B', 'C'], reopened: true });
    const done = await waitForRun(stack, runId, undefined, 15_000);
    expect(
      ['A', 'B', 'C'].map((id) => `${id} ${stepOf(done, id).status} ${stepOf(done, id).generation}`),
      summary(done),
    ).toEqual(['A succeeded 3', 'B succeeded 3', 'C succeeded 3']);
    const a = await stack.store.getStep(runId, 'A');
    expect(a?.history?.map((h) => `${h.generation} ${h.status}`)).toEqual(['1 succeeded', '2 cancelled']);
  });
});
