import { describe, expect, it } from 'vitest';
import {
  boundIssues,
  boundJson,
  clipMessage,
  joinIssues,
  MAX_ISSUE_CHARS,
  MAX_LISTED_ISSUES,
  MAX_MESSAGE_CHARS,
  messageOf,
  moreCount,
  moreItems,
} from '../../../shared/plan/bounded-text.ts';

describe('clipMessage', () => {
  it('keeps a message of at most the limit whole', () => {
    const text = 'm'.repeat(MAX_MESSAGE_CHARS);
    expect(clipMessage(text)).toBe(text);
  });

  it('cuts a 10 MB message to the limit, ending with an ellipsis', () => {
    const clipped = clipMessage('m'.repeat(10_000_000));
    expect(clipped).toHaveLength(MAX_MESSAGE_CHARS);
    expect(clipped.endsWith('m…')).toBe(true);
  });

  it('does not split a surrogate pair when the cut falls inside one', () => {
    const clipped = clipMessage(`${'a'.repeat(8)}😀😀`, 10);
    expect(clipped).toBe(`${'a'.repeat(8)}…`);
  });
});

describe('boundIssues', () => {
  it('keeps the first 100 issues and counts the rest in a final "and N more"', () => {
    const items = Array.from({ length: 200_000 }, (_, i) => i);
    let formatted = 0;
    const listed = boundIssues(items, (i) => {
      formatted++;
      return `/items/${i} must be string`;
    });
    expect(listed).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(listed[0]).toBe('/items/0 must be string');
    expect(listed.at(-1)).toBe('and 199900 more');
    expect(formatted).toBe(MAX_LISTED_ISSUES);
  });

  it('changes nothing when a list is bounded twice', () => {
    const once = boundIssues(Array.from({ length: 250 }, (_, i) => `issue ${i}`));
    expect(boundIssues(once)).toEqual(once);
    expect(once.at(-1)).toBe('and 150 more');
  });

  it('clips each issue and adds no marker to a list under the cap', () => {
    const listed = boundIssues(['x'.repeat(100_000), 'short']);
    expect(listed.map((s) => s.length)).toEqual([MAX_ISSUE_CHARS, 5]);
  });
});

describe('joinIssues', () => {
  it('stops joining once the message is full', () => {
    const message = joinIssues(Array.from({ length: 200_000 }, (_, i) => `/items/${i} must be string`));
    expect(message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(message.startsWith('/items/0 must be string; /items/1 must be string')).toBe(true);
  });
});

describe('messageOf', () => {
  it('bounds the message of an Error, a string and any other thrown value', () => {
    expect(messageOf(new Error('e'.repeat(50_000)))).toHaveLength(MAX_MESSAGE_CHARS);
    expect(messageOf('s'.repeat(50_000))).toHaveLength(MAX_MESSAGE_CHARS);
    expect(messageOf({ why: 'w'.repeat(50_000) })).toHaveLength(MAX_MESSAGE_CHARS);
    expect(messageOf(10n)).toBe('10');
  });
});

describe('moreCount', () => {
  it('reads back the count of an "and N more" item and nothing else', () => {
    expect(moreCount(moreItems(149_899))).toBe(149_899);
    expect(moreCount('and many more')).toBeUndefined();
  });
});

describe('boundJson', () => {
  it('keeps a small value as it is', () => {
    const value = { code: 'E_X', message: 'short', details: { errors: ['a', 'b'] } };
    expect(boundJson(value, 4096)).toEqual({ value, truncated: false });
  });

  it('cuts strings, arrays and objects of a large value to about its budget', () => {
    const value = {
      message: 'm'.repeat(1_000_000),
      list: Array.from({ length: 100_000 }, (_, i) => i),
      map: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, 'v'.repeat(100)])),
    };
    const bounded = boundJson(value, 4096);
    expect(bounded.truncated).toBe(true);
    expect(JSON.stringify(bounded.value).length).toBeLessThan(4096 + 200);
  });
});
