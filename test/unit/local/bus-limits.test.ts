import { describe, expect, it } from 'vitest';
import { AWS_LIMITS, checkPutEvents, putEventsEntryBytes } from '../../../infra/local/aws-limits.ts';
import { withPutEventsLimits } from '../../../infra/local/bus-limits.ts';
import { type BusEnvelope, createLocalEventBus } from '../../../shared/adapters/local/event-bus.ts';
import type { DomainEvent } from '../../../shared/ports/events.ts';

/** An event whose PutEvents entry (source `cairn`, detail-type `Big`) is exactly `bytes` bytes. */
function eventOf(bytes: number): DomainEvent {
  const frame = putEventsEntryBytes({ Source: 'cairn', DetailType: 'Big', Detail: JSON.stringify({ pad: '' }) });
  return { detailType: 'Big', detail: { pad: 'x'.repeat(bytes - frame) } };
}

function busSeeing() {
  const bus = withPutEventsLimits(createLocalEventBus());
  const seen: BusEnvelope[] = [];
  bus.subscribe({ source: ['cairn'] }, (event) => {
    seen.push(event);
  });
  return { bus, seen };
}

describe('checkPutEvents', () => {
  const entry = { Source: 'cairn', DetailType: 'StepStarted', Detail: '{}' };

  it('refuses no entries and more than 10 with a ValidationException', () => {
    expect(() => checkPutEvents([])).toThrow(expect.objectContaining({ name: 'ValidationException' }));
    expect(() => checkPutEvents(Array(11).fill(entry))).toThrow(
      expect.objectContaining({ name: 'ValidationException' }),
    );
    expect(() => checkPutEvents(Array(10).fill(entry))).not.toThrow();
  });
});

describe('withPutEventsLimits', () => {
  it('delivers an event whose entry is exactly 256 KB', async () => {
    const { bus, seen } = busSeeing();
    await bus.publish([eventOf(AWS_LIMITS.putEventsBytes)]);
    await bus.drain();
    expect(seen).toHaveLength(1);
  });

  it('delivers the other events and refuses one over 256 KB alone with a coded error, as the deployed publisher does', async () => {
    const { bus, seen } = busSeeing();
    const refused = bus.publish([{ detailType: 'Small', detail: {} }, eventOf(AWS_LIMITS.putEventsBytes + 1)]);
    await expect(refused).rejects.toMatchObject({
      name: 'EventTooLargeError',
      retryable: false,
      context: { code: 'E_EVENT_TOO_LARGE', limit: AWS_LIMITS.putEventsBytes },
    });
    await bus.drain();
    expect(seen.map((event) => event['detail-type'])).toEqual(['Small']);
  });

  it('puts two events that each fit but not together in two requests, and delivers both', async () => {
    const { bus, seen } = busSeeing();
    const half = eventOf(AWS_LIMITS.putEventsBytes / 2 + 1);
    await bus.publish([half, half]);
    await bus.drain();
    expect(seen).toHaveLength(2);
  });

  it('fills requests under lowered limits: each request within them, every event delivered in order', async () => {
    const limits = { entries: 3, bytes: 1000 };
    const requests: number[] = [];
    const inner = createLocalEventBus();
    const counting = {
      ...inner,
      publish: (events: readonly DomainEvent[]) => {
        requests.push(events.length);
        return inner.publish(events);
      },
    };
    const bus = withPutEventsLimits(counting, 'cairn', limits);
    const seen: unknown[] = [];
    bus.subscribe({ source: ['cairn'] }, (event) => {
      seen.push(event.detail.i);
    });

    await bus.publish(
      Array.from({ length: 7 }, (_, i) => ({ detailType: 'Mid', detail: { i, pad: 'x'.repeat(400) } })),
    );
    await bus.drain();

    expect(requests).toEqual([2, 2, 2, 1]);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('puts events in requests of 10 as the deployed publisher does', async () => {
    const requests: number[] = [];
    const inner = createLocalEventBus();
    const counting = {
      ...inner,
      publish: (events: readonly DomainEvent[]) => {
        requests.push(events.length);
        return inner.publish(events);
      },
    };
    await withPutEventsLimits(counting).publish(
      Array.from({ length: 23 }, (_, i) => ({ detailType: 'Small', detail: { i } })),
    );
    expect(requests).toEqual([10, 10, 3]);
  });
});

describe('checkPutEvents under lowered limits', () => {
  it('refuses a request over the lowered size with the ValidationException EventBridge answers', () => {
    const entry = { Source: 'cairn', DetailType: 'Big', Detail: 'x'.repeat(100) };
    expect(() => checkPutEvents([entry, entry], { entries: 10, bytes: 200 })).toThrow(
      expect.objectContaining({
        name: 'ValidationException',
        message: 'Total size of the entries in the request is over the limit.',
      }),
    );
    expect(() => checkPutEvents([entry], { entries: 10, bytes: 200 })).not.toThrow();
  });
});
