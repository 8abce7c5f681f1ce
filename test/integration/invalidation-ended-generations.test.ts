/**
 * An invalidation must not leave a run open whose new generations have all ended (issue 10, chaos seed 21 run 134
 * and seed 25 run 73: `running` with no step open, nothing to finish it). The invalidator runs as a second process
 * on the embedded stack, with a store or executions that fail or wait at a chosen point.
 *
 * - A live run's invalidation whose new generation was released by an upstream step outside it, ran and ended the
 *   run before the announcement: the invalidation reopened the run to announce, and nobody looked at it again.
 * A repeat that comes after its first try's new generations ran and the run finished is
 * invalidation-repeat-run-end.test.ts's case.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import { type LocalStack, plan, statusOf, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';
import { interceptStore, secondProcessDeps } from '../support/second-process.ts';

const stack = useTestStack();

const echo = (id: string, dependsOn: string[] = []) => step(stack, id, T.echo, { input: { value: id }, dependsOn });

const runEvents = async (s: LocalStack, runId: string): Promise<string[]> => {
  const { json } = await s.request('GET', `/runs/${runId}/events`);
  return (json as { events: { type: string }[] }).events.map((e) => e.type).filter((t) => t.startsWith('Run'));
};

describe('an invalidation whose new generation ran and ended the run before the announcement', () => {
  it('reopens the run to announce it, then finishes it again', async () => {
    const runId = await stack.startRun({
      plan: plan('new generation ended before the announcement', [
        step(stack, 'a', T.sleep, { input: { ms: 400 } }),
        echo('b', ['a']),
      ]),
    });
    await waitForRun(stack, runId, (run) => statusOf(run, 'a') === 'running', 10_000);
    let held = 0;
    const store: Store = interceptStore(stack.store, ['updateRun'], async (call, args) => {
      if (held === 0 && args[0] === runId && JSON.stringify(args).includes('StepsInvalidated')) {
        held++;
        // a ends, its release starts b's generation 2 (it waits for a outside the invalidation), b succeeds and the
        // run completes: all before the announcement, which the complete run then refuses.
        await waitForRun(stack, runId, (run) => run.status === 'complete', 10_000);
      }
      return call();
    });
    const invalidator = createInvalidator(secondProcessDeps(stack, store));

    const result = await invalidator.invalidateStep({ runId, stepId: 'b', reason: 'stale' });

    expect(held).toBe(1);
    expect(result).toMatchObject({ stepIds: ['b'], reopened: true });
    // Before, the run stayed running with nothing open: b had ended in the ending the reopening undid.
    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}:${s.status}`)).toEqual(['a1:succeeded', 'b2:succeeded']);
    expect(await runEvents(stack, runId)).toEqual(['RunStarted', 'RunFinished', 'RunReopened', 'RunFinished']);
  }, 60_000);
});
