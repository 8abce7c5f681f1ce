/**
 * A RunStep whose step succeeded on a later attempt (its `retry` entry) and whose follow-ups then threw (a release
 * throttled by the store) is retried by its Task with the same payload: the step is no longer in flight, and the
 * retry must redo the release instead of answering `done`. Before, the dependent stayed `pending` and the run stayed
 * open with nothing left to move it (the chaos suite's "stuck", seed 3, behind a review and behind a flaky step).
 */
import { randomUUID } from 'node:crypto';
import { ThrottlingException } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack } from '../../infra/local/boot.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Store } from '../../shared/ports/store.ts';
import { type LocalStack, plan, step, summary, waitForRun } from '../support/local-stack.ts';

let stack: LocalStack;
let throttled = 0;

/** The store whose first release of dependent `D` is throttled (as DynamoDB's, once the SDK gave up). */
function throttleFirstReleaseOfD(store: Store): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if ((key !== 'releaseLastDependency' && key !== 'releaseDependency') || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (args[1] === 'D' && throttled === 0) {
          throttled += 1;
          return Promise.reject(new ThrottlingException({ message: 'injected: Rate exceeded', $metadata: {} }));
        }
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
}

beforeAll(async () => {
  stack = await startLocalStack({
    conformance: true,
    backoffMs: 5,
    demoDelayMs: 0,
    token: 'test-token',
    wrapStore: throttleFirstReleaseOfD,
  });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

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
