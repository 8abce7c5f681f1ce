/**
 * FinalizeRun failing a run (its deadline passed, its wait failed) closes the open steps before it writes the
 * ending, as a cancellation does. Before, the ending came first: until the close landed, a step in flight could still
 * succeed, and be announced, in a run already failed with its RunFinished published.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { RunRecord, StepRecord, Store } from '../../shared/ports/store.ts';
import { plan, statusOf, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

/** The store writes of interest, in the order they were made: `ending <reason>` or `close <stepId>`. */
const writes: string[] = [];

function recordingOrder(store: Store): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function' || (key !== 'updateRun' && key !== 'transitionStep')) return value;
      return async (...args: unknown[]) => {
        const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        if (key === 'updateRun') {
          const reason = (args[2] as Partial<RunRecord> | undefined)?.terminal?.reason;
          if (result && reason) writes.push(`ending ${reason}`);
        } else if (result && (args[3] as Partial<StepRecord> | undefined)?.status === 'cancelled') {
          writes.push(`close ${String(args[1])}`);
        }
        return result;
      };
    },
  });
}

const stack = useTestStack({ retryIntervalMs: 5, limits: { runDeadlineSeconds: 2 }, wrapStore: recordingOrder });

describe('FinalizeRun at the deadline', () => {
  it('closes the step in flight before it writes the run’s failure', async () => {
    const runId = await stack.startRun({
      plan: plan('deadline closes steps first', [step(stack, 'S', T.sleep, { input: { ms: 20_000 } })]),
    });

    const failed = await waitForRun(stack, runId, (run) => run.status === 'failed' && statusOf(run, 'S') !== 'running');

    expect(failed.terminal?.reason, summary(failed)).toBe('deadline');
    expect(statusOf(failed, 'S')).toBe('cancelled');
    expect(writes).toEqual(['close S', 'ending deadline']);
  }, 60_000);
});
