/**
 * A RunStep whose step succeeded on a later attempt (its `retry` entry) and whose follow-ups then threw (a release
 * throttled by the store) is retried by its Task with the same payload: the step is no longer in flight, and the
 * retry must redo the release instead of answering `done`. Before, the dependent stayed `pending` and the run stayed
 * open with nothing left to move it (the chaos suite's "stuck", seed 3, behind a review and behind a flaky step).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Store } from '../../shared/ports/store.ts';
import { plan, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';
import { injectedThrottle, interceptStore } from '../support/second-process.ts';

let throttled = 0;

/** The store whose first release of dependent `D` is throttled (as DynamoDB's, once the SDK gave up). */
const throttleFirstReleaseOfD = (store: Store): Store =>
  interceptStore(store, ['releaseLastDependency', 'releaseDependency'], async (call, args) => {
    if (args[1] === 'D' && throttled === 0) {
      throttled += 1;
      throw injectedThrottle();
    }
    return call();
  });

const stack = useTestStack({ wrapStore: throttleFirstReleaseOfD });

describe('RunStep retried after a later attempt succeeded', () => {
  it('releases the dependent when the first release was throttled', async () => {
    const runId = await stack.startRun({
      plan: plan('release after a throttle', [
        step(stack, 'F', T.flaky, { input: { key: `flaky-${randomUUID()}`, failures: 1 } }),
        step(stack, 'D', T.echo, { dependsOn: ['F'], input: { value: 'd' } }),
      ]),
    });

    const done = await waitForRun(stack, runId, undefined, 60_000);

    expect(throttled).toBe(1);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => [s.id, s.status])).toEqual([
      ['F', 'succeeded'],
      ['D', 'succeeded'],
    ]);
  }, 90_000);
});
