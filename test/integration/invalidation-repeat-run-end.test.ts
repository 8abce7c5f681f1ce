/**
 * A repeated invalidation that reopens a run whose moved steps have already ended (issue 10, chaos seed 11 run 15).
 *
 * The first try of an invalidation with a key moved a sink to its next generation, then failed before it announced
 * (a throttle). The sink's upstream, whose release was late (its RunStep slowed by the store), released the new
 * generation all the same: it was started, ran, and its own look at the run's end finished the run. The next try
 * (the invalidator's own, in place) then found the run finished, reopened it, took the sink as moved by its first try and announced; but the
 * sink had already ended, so it would never look at the run's end again, and nothing else was open to do so: the
 * reopened run stayed `running` with no step open.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { PlanStep } from '../../shared/plan/schema.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import { plan, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { injectedThrottle, interceptStore, secondProcessDeps } from '../support/second-process.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

const { stack, faults } = useStackWithFaults();

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

const echo = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

describe('a repeated invalidation whose moved sink ran and finished the run before the repeat', () => {
  it('looks at the run end after reopening it, and the run completes again', async () => {
    const objective = 'invalidation repeated after its sink ran';
    // a's release of s is held: s is still in its first generation, pending, when the invalidation moves it.
    const release = faults.hold({
      method: 'releaseLastDependency',
      match: (call) => call.runId === faults.runIdFor(objective) && call.args[1] === 's',
    });
    const runId = await stack.startRun({ plan: plan(objective, [echo('a'), echo('s', { dependsOn: ['a'] })]) });
    await release.arrived;

    // The first try's announcement is throttled; the next try starts once the run has finished.
    let throttled = 0;
    const finished = deferred();
    const store: Store = interceptStore(stack.store, ['updateRun', 'getRun'], async (call, args) => {
      if (args[0] !== runId) return call();
      if (throttled === 0 && JSON.stringify(args).includes('StepsInvalidated')) {
        throttled++;
        throw injectedThrottle();
      }
      if (throttled === 1 && args.length === 1) {
        throttled++;
        await finished.promise;
      }
      return call();
    });
    const invalidator = createInvalidator(secondProcessDeps(stack, store));
    const request = { runId, stepId: 's', reason: 'stale', requestId: 'repeat-after-sink-ran' };
    const invalidation = invalidator.invalidateStep(request);
    while (throttled === 0) await new Promise((resolve) => setTimeout(resolve, 10));

    // The late release finds s in its generation 2 with a counted, and starts it; s ends the run.
    release.release();
    const ended = await waitForRun(
      stack,
      runId,
      (run) => run.status === 'complete' && stepOf(run, 's').generation === 2,
      10_000,
    );
    expect(stepOf(ended, 's').status, summary(ended)).toBe('succeeded');
    finished.resolve();
    const again = await invalidation;

    expect(throttled).toBe(2);
    expect(again).toMatchObject({ stepIds: ['s'], reopened: true });
    // Before, the reopened run stayed running: s succeeded in generation 2, nothing open, nobody to finish it.
    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}:${s.status}`)).toEqual(['a1:succeeded', 's2:succeeded']);
  }, 60_000);
});
