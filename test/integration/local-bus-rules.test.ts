/**
 * The rules that drive cairn on the embedded bus: the deployed patterns (BUS_RULES) route to the handler of each
 * rule's target, retried a few times like an EventBridge rule's retry policy.
 */
import { describe, expect, it } from 'vitest';
import { subscribeBusRules } from '../../infra/local/bus-rules.ts';
import { type BusEnvelope, createLocalEventBus } from '../../shared/adapters/local/event-bus.ts';

const changed = { detailType: 'ResourceChanged', detail: { resourceKey: 'repo:main' } };
const failedFinal = { detailType: 'StepFailed', detail: { runId: 'r', stepId: 's', generation: 1, final: true } };

describe('subscribeBusRules', () => {
  it('delivers each event to the target of the rule whose pattern matches, and nothing else', async () => {
    const bus = createLocalEventBus();
    const seen: Record<string, string[]> = { Invalidator: [], Replanner: [] };
    const record = (target: string) => async (event: BusEnvelope) => {
      seen[target]?.push(event['detail-type']);
    };
    subscribeBusRules(bus, { Invalidator: record('Invalidator'), Replanner: record('Replanner') });

    await bus.publish([
      changed,
      failedFinal,
      { detailType: 'StepFailed', detail: { ...failedFinal.detail, final: false } },
      { detailType: 'ResourceChanged', detail: { source: 'no key' } },
      { detailType: 'StepSucceeded', detail: {} },
    ]);
    await bus.drain();

    expect(seen).toEqual({ Invalidator: ['ResourceChanged'], Replanner: ['StepFailed'] });
  });

  it('subscribes only the targets it is given and stops delivering once unsubscribed', async () => {
    const bus = createLocalEventBus();
    const seen: string[] = [];
    const unsubscribe = subscribeBusRules(bus, {
      Invalidator: async (event) => {
        seen.push(String(event.detail.resourceKey));
      },
    });
    await bus.publish([changed, failedFinal]);
    await bus.drain();
    unsubscribe();
    await bus.publish([changed]);
    await bus.drain();
    expect(seen).toEqual(['repo:main']);
  });

  it('tries a failing delivery again, then reports it to the bus', async () => {
    const errors: unknown[] = [];
    const bus = createLocalEventBus({ onError: (error) => errors.push(error) });
    let calls = 0;
    subscribeBusRules(
      bus,
      {
        Invalidator: async () => {
          calls += 1;
          if (calls < 3) throw new Error(`attempt ${calls} failed`);
        },
      },
      { retryDelayMs: 1 },
    );
    await bus.publish([changed]);
    await bus.drain();
    expect([calls, errors.length]).toEqual([3, 0]);

    const failing = createLocalEventBus({ onError: (error) => errors.push(error) });
    subscribeBusRules(
      failing,
      { Invalidator: () => Promise.reject(new Error('down')) },
      { attempts: 2, retryDelayMs: 1 },
    );
    await failing.publish([changed]);
    await failing.drain();
    expect(errors.map((e) => (e as Error).message)).toEqual(['down']);
  });
});
