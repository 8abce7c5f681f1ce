import { createRequire } from 'node:module';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoItemSize, sizeDynaliteItemsAsDynamoDb } from '../../../../shared/adapters/local/dynalite-item-size.ts';

type ItemSize = (item: Record<string, unknown>, compress?: boolean, addMetaSize?: boolean, rangeKey?: string) => number;

const require = createRequire(import.meta.url);
const dbPath = require.resolve('dynalite/db/index.js');

/** dynalite's own count, from a copy of its db module loaded apart (the shared one may be replaced already). */
function dynalitesOwn(): ItemSize {
  const shared = require.cache[dbPath];
  delete require.cache[dbPath];
  try {
    return (require(dbPath) as { itemSize: ItemSize }).itemSize;
  } finally {
    if (shared) require.cache[dbPath] = shared;
  }
}

const numbers = [
  '0',
  '-0',
  '7',
  '10',
  '12',
  '-12',
  '1200',
  '0.5',
  '0.05',
  '12.5',
  '123',
  '1.25e3',
  '99.99',
  '1e-7',
  '-4.4',
];
const strings = ['', 'a', 'step-l0_3', 'é', '€uro', '𝄞 clef'];

function* items(): Generator<Record<string, AttributeValue>> {
  for (const n of numbers) {
    yield { PK: { S: 'RUN#1' }, n: { N: n } };
    yield { PK: { S: 'RUN#1' }, list: { L: [{ S: 'x' }, { N: n }] }, map: { M: { deep: { M: { n: { N: n } } } } } };
    yield { PK: { S: 'RUN#1' }, set: { NS: ['3', n] } };
  }
  for (const s of strings) {
    yield { [`name${s}`]: { S: s }, ss: { SS: [s, 'b'] }, flag: { BOOL: true }, none: { NULL: true } };
    yield { m: { M: { [s || 'k']: { L: [{ S: s }, { M: {} }] } } }, generation: { N: '3' } };
  }
}

describe('sizeDynaliteItemsAsDynamoDb', () => {
  it('sizes every item as the larger of dynalite’s count and DynamoDB’s, computing dynalite’s only where it can be larger', () => {
    const own = dynalitesOwn();
    sizeDynaliteItemsAsDynamoDb();
    const patched = (require(dbPath) as { itemSize: ItemSize }).itemSize;
    let checked = 0;
    for (const item of items()) {
      expect(patched(item), JSON.stringify(item)).toBe(Math.max(own(item), dynamoItemSize(item)));
      checked++;
    }
    expect(checked).toBe(numbers.length * 3 + strings.length * 2);
  });
});
