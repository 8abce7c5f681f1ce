import { describe, expect, it } from 'vitest';
import {
  INLINE_STRING_LIMIT,
  offload,
  referencedParts,
  restore,
} from '../../../../shared/adapters/aws/dynamo-blobs.ts';
import { isNotFoundError } from '../../../../shared/errors.ts';

const big = (n: number, fill = 'x') => fill.repeat(n);

describe('offload', () => {
  it('leaves an item whose strings are all short as it is', () => {
    const item = { PK: { S: 'RUN#r' }, SK: { S: 'RUN' }, objective: { S: 'short' }, n: { N: '1' } };
    const { value, parts } = offload(item);
    expect(value).toBe(item);
    expect(parts).toEqual([]);
  });

  it('moves a long string into parts that each stay under 300 KB, and keeps keys and the outbox inline', () => {
    const text = `${big(250 * 1024)}€${big(100 * 1024, 'ü')}`;
    const item = {
      PK: { S: big(INLINE_STRING_LIMIT + 1, 'k') },
      SK: { S: 'RUN' },
      outbox: { S: big(INLINE_STRING_LIMIT + 1, 'o') },
      plan: { S: text },
    };
    const { value, parts } = offload(item);
    expect(value.PK).toBe(item.PK);
    expect(value.outbox).toBe(item.outbox);
    expect(value.plan?.M?.cairnBlob?.S).toMatch(/^[0-9a-f]{64}$/);
    expect(parts.length).toBe(4);
    for (const part of parts) expect(Buffer.byteLength(part.data?.S ?? '', 'utf8')).toBeLessThan(300 * 1024);
    expect(referencedParts([value])).toHaveLength(parts.length);
    expect(restore([value], parts)).toEqual([item]);
  });

  it('never cuts a part between the halves of a surrogate pair (DynamoDB stores UTF-8)', () => {
    // 100 K characters is where the first part ends: an emoji there straddles the cut.
    const text = `${big(100 * 1024 - 1)}😀${big(100 * 1024, '😀')}`;
    const { value, parts } = offload({ output: { S: text } });
    // A lone surrogate does not survive UTF-8: encoded and decoded, it comes back as U+FFFD.
    const wellFormed = (data: string) => Buffer.from(data, 'utf8').toString('utf8') === data;
    for (const part of parts) expect(wellFormed(part.data?.S ?? ''), 'a part with half a character').toBe(true);
    expect(restore([value], parts)).toEqual([{ output: { S: text } }]);
  });

  it('gives the same value the same parts: a repeated write changes nothing', () => {
    const item = { a: { S: big(INLINE_STRING_LIMIT * 2) } };
    expect(offload(item).parts).toEqual(offload({ b: { S: big(INLINE_STRING_LIMIT * 2) } }).parts);
  });
});

describe('restore', () => {
  it('refuses with NotFoundError when a part is missing', () => {
    const { value, parts } = offload({ PK: { S: 'p' }, SK: { S: 's' }, out: { S: big(250 * 1024) } });
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
