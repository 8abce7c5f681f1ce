/**
 * An invalidation must not leave a run open whose new generations have all ended (issue 10, chaos seed 21 run 134
 * and seed 25 run 73: `running` with no step open, nothing to finish it). The invalidator runs as a second process
 * on the embedded stack, with a store or executions that fail or wait at a chosen point.
 *
 * - A live run's invalidation whose new generation was released by an upstream step outside it, ran and ended the
 *   run before the announcement: the invalidation reopened the run to announce, and nobody looked at it again.
 * - A repeat of an invalidation (the client's retry after a lost answer) that came after its first try's new
 *   generations had run and the run had finished: it reopened the run for steps that had nothing left to do.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { type Executions, stepExecutionName } from '../../shared/ports/executions.ts';
import type { Store } from '../../shared/ports/store.ts';
import { createInvalidator } from '../../shared/services/invalidator.ts';
import {
  type LocalStack,
  plan,
  statusOf,
  step,
  stepOf,
  summary,
  useTestStack,
  waitForRun,
} from '../support/local-stack.ts';
import { injectedThrottle, interceptStore, secondProcessDeps } from '../support/second-process.ts';

const stack = useTestStack();

const echo = (id: string, dependsOn: string[] = []) => step(stack, id, T.echo, { input: { value: id }, dependsOn });

/** `executions` with each `start` going through `around` (given the start itself and the execution's name). */
function interceptStarts(
  executions: Executions,
  around: (start: () => Promise<unknown>, name: string) => Promise<unknown>,
): Executions {
  return new Proxy(executions, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key !== 'start' || typeof value !== 'function') return value;
      return (...args: unknown[]) =>
        around(() => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args), String(args[1]));
    },
  });
}

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

describe('a repeated invalidation that comes after its new generations ran and the run finished', () => {
  it('leaves the run finished', async () => {
    const runId = await stack.startRun({
      plan: plan('invalidation repeated after its generations ended', [echo('a'), echo('b', ['a'])]),
    });
    expect((await waitForRun(stack, runId)).status).toBe('complete');
    let lost = 0;
    // The first try starts b's generation 2, then hears a throttle (the start landed): it throws, and the client
    // sends the same request again once b has run and the run has finished.
    const executions = interceptStarts(stack.executions, async (start, name) => {
      const started = await start();
      if (lost === 0 && name === stepExecutionName(runId, 'b', 2)) {
        lost++;
        throw injectedThrottle();
      }
      return started;
    });
    const invalidator = createInvalidator({ ...secondProcessDeps(stack), executions });
    const request = { runId, stepId: 'b', reason: 'stale', requestId: 'lost-start' };

    await expect(invalidator.invalidateStep(request)).rejects.toThrow(/Rate exceeded/);
    expect(lost).toBe(1);
    const finished = await waitForRun(
      stack,
      runId,
      (run) => run.status === 'complete' && stepOf(run, 'b').generation === 2,
      10_000,
    );
    expect(stepOf(finished, 'b').status).toBe('succeeded');
    const again = await invalidator.invalidateStep(request);

    expect(again).toMatchObject({ stepIds: ['b'], reopened: false });
    // Before, the repeat reopened the complete run (b moved already, nothing to start) and it stayed running.
    await stack.settled();
    const done = await waitForRun(stack, runId, undefined, 10_000);
    expect(done.status, summary(done)).toBe('complete');
    expect(await runEvents(stack, runId)).toEqual(['RunStarted', 'RunFinished', 'RunReopened', 'RunFinished']);
  }, 60_000);
});
