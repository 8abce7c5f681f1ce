/**
 * Handlers run at once in the embedded runtime, as separate Lambda invocations do on AWS: two steps of a plan, two
 * bus deliveries, two executions' Tasks. Each test meets a latch that opens only when every party has arrived; run
 * one at a time, the first party would wait for ever, so the latch gives up after a while and the test fails
 * instead of hanging.
 */
import { describe, expect, it } from 'vitest';
import { createLocalEventBus } from '../../shared/adapters/local/event-bus.ts';
import { builtinBinding } from '../../shared/capabilities/builtin.ts';
import { capabilityError } from '../../shared/capabilities/capability-errors.ts';
import type { Capability } from '../../shared/plan/schema.ts';
import { EVENT_SOURCE } from '../../shared/ports/events.ts';
import { plan, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

/** Long enough for a shared two-core machine, short enough to fail well before the test's own timeout. */
const GIVE_UP_MS = 15_000;

/** Opens when `parties` have arrived; a party gives up (false) after GIVE_UP_MS. */
function latch(parties: number) {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return async (): Promise<boolean> => {
    arrived += 1;
    if (arrived >= parties) open();
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), GIVE_UP_MS);
    });
    const met = await Promise.race([opened.then(() => true), gaveUp]);
    clearTimeout(timer);
    return met;
  };
}

const LATCH_TARGET = 'tool:test.latch';
const latchCapability: Capability = {
  target: LATCH_TARGET,
  description: 'Waits until every party of its latch has started.',
  sideEffect: 'none',
  inputSchema: { type: 'object', required: ['latch'], properties: { latch: { type: 'string' } } },
  outputSchema: { type: 'object', required: ['met'], properties: { met: { type: 'boolean' } } },
};
const latches = new Map<string, () => Promise<boolean>>();

const stack = useTestStack({
  limits: { maxReplans: 0 },
  extraCapabilities: {
    capabilities: [latchCapability],
    bindings: {
      [LATCH_TARGET]: builtinBinding(LATCH_TARGET, async (call) => {
        const arrive = latches.get(String((call.input as { latch: string }).latch));
        if (!arrive || !(await arrive()))
          throw capabilityError('E_SERIALIZED', 'the other party never started', { retryable: false });
        return { output: { met: true } };
      }),
    },
  },
});

describe('concurrency in the embedded runtime', () => {
  it('runs two independent steps of a plan at once: each waits until the other has started', async () => {
    latches.set('steps', latch(2));
    const runId = await stack.startRun({
      plan: plan('two at once', [
        step(stack, 'left', LATCH_TARGET, { input: { latch: 'steps' } }),
        step(stack, 'right', LATCH_TARGET, { input: { latch: 'steps' } }),
      ]),
    });
    const done = await waitForRun(stack, runId, undefined, GIVE_UP_MS * 2);
    expect(done.status, summary(done)).toBe('complete');
  }, 60_000);

  it('delivers two events to the bus’s subscribers at once, while the run goes on', async () => {
    const arrive = latch(2);
    const met: boolean[] = [];
    let runId = '';
    const unsubscribe = stack.bus.subscribe(
      { source: [EVENT_SOURCE], 'detail-type': ['StepSucceeded'] },
      async (event) => {
        if (event.detail.runId === runId) met.push(await arrive());
      },
    );
    try {
      runId = await stack.startRun({
        plan: plan('two deliveries at once', [
          step(stack, 'a', 'tool:conformance.echo', { input: { value: 1 } }),
          step(stack, 'b', 'tool:conformance.echo', { input: { value: 2 } }),
        ]),
      });
      const done = await waitForRun(stack, runId, undefined, GIVE_UP_MS * 2);
      expect(done.status, summary(done)).toBe('complete');
      await stack.bus.drain();
      expect(met).toEqual([true, true]);
    } finally {
      unsubscribe();
    }
  }, 60_000);
});

describe('the local bus', () => {
  it('delivers one event to two subscribers at once, and two events to one subscriber at once', async () => {
    const bus = createLocalEventBus();
    const twoSubscribers = latch(2);
    const twoEvents = latch(2);
    const met: string[] = [];
    bus.subscribe({ 'detail-type': ['One'] }, async () => {
      if (await twoSubscribers()) met.push('first subscriber');
    });
    bus.subscribe({ 'detail-type': ['One'] }, async () => {
      if (await twoSubscribers()) met.push('second subscriber');
    });
    bus.subscribe({ 'detail-type': ['Two'] }, async (event) => {
      if (await twoEvents()) met.push(`event ${event.detail.n}`);
    });
    await bus.publish([
      { detailType: 'One', detail: {} },
      { detailType: 'Two', detail: { n: 1 } },
      { detailType: 'Two', detail: { n: 2 } },
    ]);
    await bus.drain();
    expect(met.sort()).toEqual(['event 1', 'event 2', 'first subscriber', 'second subscriber']);
  }, 40_000);
});
