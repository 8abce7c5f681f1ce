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

describe('putEventsEntryBytes', () => {
  it('counts the UTF-8 bytes of source, detail-type, detail and resources, and 14 for a time', () => {
    const entry = { Source: 'cairn', DetailType: 'Été', Detail: '{"a":"é"}', Resources: ['r1', 'ré'] };
    expect(putEventsEntryBytes(entry)).toBe(5 + 5 + 10 + 2 + 3);
    expect(putEventsEntryBytes({ ...entry, Time: new Date() })).toBe(5 + 5 + 10 + 2 + 3 + 14);
  });
});

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

  it('refuses a request over 256 KB as EventBridge does, and delivers none of its events', async () => {
    const { bus, seen } = busSeeing();
    const refused = bus.publish([{ detailType: 'Small', detail: {} }, eventOf(AWS_LIMITS.putEventsBytes + 1)]);
    await expect(refused).rejects.toMatchObject({
      name: 'ValidationException',
      message: 'Total size of the entries in the request is over the limit.',
      $metadata: { httpStatusCode: 400 },
    });
    await bus.drain();
    expect(seen).toEqual([]);
  });

  it('adds the entries of one request up: two events that each fit do not fit together', async () => {
    const { bus, seen } = busSeeing();
    const half = eventOf(AWS_LIMITS.putEventsBytes / 2 + 1);
    await expect(bus.publish([half, half])).rejects.toMatchObject({ name: 'ValidationException' });
    await bus.drain();
    expect(seen).toEqual([]);
  });

  it('puts events in requests of 10 as the deployed publisher does: the requests before a refused one land', async () => {
    const { bus, seen } = busSeeing();
    const small = Array.from({ length: 10 }, (_, i) => ({ detailType: 'Small', detail: { i } }));
    const refused = bus.publish([...small, eventOf(AWS_LIMITS.putEventsBytes + 1)]);
    await expect(refused).rejects.toMatchObject({ name: 'ValidationException' });
    await bus.drain();
    expect(seen.map((event) => event.detail.i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
