import { describe, expect, it } from 'vitest';
import {
  PUT_EVENTS_LIMITS,
  putEventsEntryBytes,
  putEventsRequests,
  putInRequests,
  utf8Bytes,
} from '../../../shared/events/put-events.ts';

describe('utf8Bytes', () => {
  it('counts as UTF-8 encoding does, surrogate pairs and lone surrogates included', () => {
    for (const text of ['', 'cairn', 'Été', '日本語', '😀 ok', 'a\ud800b', '\udc00', `${'x'.repeat(1000)}€`]) {
      expect(utf8Bytes(text), JSON.stringify(text)).toBe(Buffer.byteLength(text, 'utf8'));
    }
  });
});

describe('putEventsEntryBytes', () => {
  it('counts source, detail-type, detail and resources, and 14 for a time (AWS: entry size calculation)', () => {
    const entry = { Source: 'cairn', DetailType: 'Été', Detail: '{"a":"é"}', Resources: ['r1', 'ré'] };
    expect(putEventsEntryBytes(entry)).toBe(5 + 5 + 10 + 2 + 3);
    expect(putEventsEntryBytes({ ...entry, Time: new Date() })).toBe(5 + 5 + 10 + 2 + 3 + 14);
  });
});

describe('putEventsRequests', () => {
  const limits = { entries: 3, bytes: 100 };
  const sizeOf = (n: number) => n;

  it('splits by count when the entries are small', () => {
    expect(putEventsRequests([1, 1, 1, 1, 1, 1, 1], sizeOf, limits).requests).toEqual([[1, 1, 1], [1, 1, 1], [1]]);
  });

  it('splits by total size: ten entries that each fit do not make one request over the limit', () => {
    const { requests, oversized } = putEventsRequests(Array(10).fill(30_000), sizeOf, PUT_EVENTS_LIMITS);
    expect(requests.map((r) => r.length)).toEqual([8, 2]);
    for (const request of requests) expect(request.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(262_144);
    expect(oversized).toEqual([]);
  });

  it('takes an entry of exactly the limit, alone', () => {
    expect(putEventsRequests([1, 100, 1], sizeOf, limits).requests).toEqual([[1], [100], [1]]);
  });

  it('sets an entry over the limit aside and keeps the others in order', () => {
    const { requests, oversized } = putEventsRequests([10, 101, 20, 90], sizeOf, limits);
    expect(requests).toEqual([[10, 20], [90]]);
    expect(oversized).toEqual([{ entry: 101, bytes: 101 }]);
  });
});

describe('putInRequests', () => {
  it('sends every event that fits, then names the oversized one in a coded, non-retryable error', async () => {
    const sent: string[][] = [];
    const events = [
      { detailType: 'Small', detail: { runId: 'r1', i: 1 } },
      { detailType: 'Huge', detail: { runId: 'r2', pad: 'x'.repeat(300) } },
      { detailType: 'Small', detail: { runId: 'r1', i: 2 } },
    ];
    const publishing = putInRequests(
      events,
      'cairn',
      async (request) => {
        sent.push(request.map(({ event }) => event.detailType));
      },
      { entries: 10, bytes: 200 },
    );
    await expect(publishing).rejects.toMatchObject({
      name: 'EventTooLargeError',
      retryable: false,
      context: { code: 'E_EVENT_TOO_LARGE', limit: 200, events: [{ detailType: 'Huge', runId: 'r2' }] },
    });
    expect(sent).toEqual([['Small', 'Small']]);
  });
});
