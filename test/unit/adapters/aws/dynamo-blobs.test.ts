import { describe, expect, it } from 'vitest';
import {
  blobOwner,
  INLINE_STRING_LIMIT,
  offload,
  outboxEventKeys,
  outboxValue,
  referencedParts,
  restore,
  restoreOutboxEvents,
} from '../../../../shared/adapters/aws/dynamo-blobs.ts';
import { isNotFoundError } from '../../../../shared/errors.ts';
import { encodeOutbox, type OutboxEntry, outboxOf } from '../../../../shared/events/outbox.ts';

const big = (n: number, fill = 'x') => fill.repeat(n);

describe('offload', () => {
  it('leaves an item whose strings are all short as it is', () => {
    const item = { PK: { S: 'RUN#r' }, SK: { S: 'RUN' }, objective: { S: 'short' }, n: { N: '1' } };
    const { value, parts } = offload(item, {});
    expect(value).toBe(item);
    expect(parts).toEqual([]);
  });

  it('moves a long string into parts that each stay under 300 KB, and keeps keys inline', () => {
    const text = `${big(250 * 1024)}€${big(100 * 1024, 'ü')}`;
    const item = {
      PK: { S: big(INLINE_STRING_LIMIT + 1, 'k') },
      SK: { S: 'RUN' },
      plan: { S: text },
    };
    const { value, parts } = offload(item, {});
    expect(value.PK).toBe(item.PK);
    expect(value.plan?.M?.cairnBlob?.S).toMatch(/^[0-9a-f]{64}$/);
    expect(parts.length).toBe(4);
    for (const part of parts) expect(Buffer.byteLength(part.data?.S ?? '', 'utf8')).toBeLessThan(300 * 1024);
    expect(referencedParts([value])).toHaveLength(parts.length);
    expect(restore([value], parts)).toEqual([item]);
  });

  it('keeps a large outbox a string (the stream filter reads it) and its events out of line', () => {
    const entry: OutboxEntry = {
      id: 'w1',
      runId: 'r1',
      at: '2030-01-01T00:00:00.000Z',
      events: Array.from({ length: 40 }, (_, i) => ({
        type: 'RunStarted' as const,
        detail: { runId: 'r1', n: big(1000) + i },
      })),
    };
    const { value, parts } = offload(
      { PK: { S: 'RUN#r1' }, SK: { S: 'OUTBOX#w1' }, outbox: { S: encodeOutbox(entry) } },
      { runId: 'r1' },
    );
    const header = outboxOf({ dynamodb: { NewImage: value } });
    expect(value.outbox?.S?.length).toBeLessThan(500);
    expect(header).toMatchObject({ id: 'w1', runId: 'r1', at: entry.at, events: [] });
    expect(outboxEventKeys(header ? [header] : [])).toHaveLength(parts.length);
    expect(restoreOutboxEvents(header ? [header] : [], parts)).toEqual([entry]);
  });

  it('leaves a small outbox inline, whole', () => {
    const entry: OutboxEntry = { id: 'w2', runId: 'r1', at: '2030-01-01T00:00:00.000Z', events: [] };
    const { value, parts } = outboxValue(entry);
    expect(value).toEqual({ S: encodeOutbox(entry) });
    expect(parts).toEqual([]);
  });

  it('never cuts a part between the halves of a surrogate pair (DynamoDB stores UTF-8)', () => {
    // 100 K characters is where the first part ends: an emoji there straddles the cut.
    const text = `${big(100 * 1024 - 1)}😀${big(100 * 1024, '😀')}`;
    const { value, parts } = offload({ output: { S: text } }, {});
    // A lone surrogate does not survive UTF-8: encoded and decoded, it comes back as U+FFFD.
    const wellFormed = (data: string) => Buffer.from(data, 'utf8').toString('utf8') === data;
    for (const part of parts) expect(wellFormed(part.data?.S ?? ''), 'a part with half a character').toBe(true);
    expect(restore([value], parts)).toEqual([{ output: { S: text } }]);
  });

  it('gives the same value the same parts: a repeated write changes nothing', () => {
    const item = { a: { S: big(INLINE_STRING_LIMIT * 2) } };
    expect(offload(item, {}).parts).toEqual(offload({ b: { S: big(INLINE_STRING_LIMIT * 2) } }, {}).parts);
  });
});

describe('blob owners', () => {
  it('keeps the parts of a run item in the run blob partitions, named by the reference', () => {
    const item = { PK: { S: 'RUN#r7' }, SK: { S: 'STEP#a' }, output: { S: big(250 * 1024) } };
    const owner = blobOwner('RUN#r7', item);
    expect(owner).toEqual({ runId: 'r7' });
    const { value, parts } = offload(item, owner);
    expect(value.output?.M?.run).toEqual({ S: 'r7' });
    expect(parts.map((part) => part.PK?.S)).toEqual(parts.map(() => expect.stringMatching(/^RUNBLOB#r7#\d{1,2}$/)));
    expect(parts.every((part) => part.expiresAt === undefined)).toBe(true);
    expect(restore([value], parts)).toEqual([item]);
  });

  it('gives an approval parts of its run, and any other item parts that expire with it', () => {
    expect(blobOwner('APPROVAL#a1', { runId: { S: 'r7' } })).toEqual({ runId: 'r7' });
    const item = { PK: { S: 'PLANJOB#j' }, SK: { S: 'PLANJOB' }, expiresAt: { N: '123' }, plan: { S: big(20_000) } };
    const { value, parts } = offload(item, blobOwner('PLANJOB#j', item));
    expect(parts.map((part) => [part.PK?.S?.slice(0, 5), part.expiresAt])).toEqual([['BLOB#', { N: '123' }]]);
    expect(value.expiresAt).toEqual({ N: '123' });
    expect(restore([value], parts)).toEqual([item]);
  });

  it('reads a reference written before run partitions from the shared parts', () => {
    const { value, parts } = offload({ out: { S: big(20_000) } }, {});
    expect(value.out?.M?.run).toBeUndefined();
    expect(parts[0]?.PK?.S).toMatch(/^BLOB#[0-9a-f]{64}$/);
    expect(referencedParts([value])).toEqual([{ PK: parts[0]?.PK?.S, SK: 'PART#0000' }]);
  });
});

describe('restore', () => {
  it('refuses with NotFoundError when a part is missing', () => {
    const { value, parts } = offload({ PK: { S: 'p' }, SK: { S: 's' }, out: { S: big(250 * 1024) } }, {});
    const error = (() => {
      try {
        return restore([value], parts.slice(1));
      } catch (e) {
        return e;
      }
    })();
    expect(isNotFoundError(error)).toBe(true);
  });
});
