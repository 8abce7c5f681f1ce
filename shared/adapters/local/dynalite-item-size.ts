/**
 * DynamoDB's 400 KB item limit, measured as DynamoDB measures it. dynalite enforces the limit (PutItem and
 * BatchWriteItem: "Item size has exceeded the maximum allowed size"; UpdateItem: "Item size to update has exceeded
 * the maximum allowed size", both ValidationException) but counts strings and attribute names in UTF-16 code units,
 * so a value of non-ASCII text (2–4 bytes a character in UTF-8) passes locally at up to 3× what AWS takes. This
 * makes dynalite's size check count UTF-8 bytes, as DynamoDB does: names plus values.
 */
import { createRequire } from 'node:module';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

type ItemSize = (item: Record<string, unknown>, compress?: boolean, addMetaSize?: boolean, rangeKey?: string) => number;

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

/** A number's size: about one byte per two significant digits, plus one (DynamoDB's documented estimate). */
function numberSize(text: string): number {
  const digits = text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '');
  return digits.length === 0 ? 1 : Math.ceil(digits.length / 2) + 1 + (text.startsWith('-') ? 1 : 0);
}

/** The size of one attribute value in the wire format (`{ S: ... }`, `{ M: {...} }`, ...). */
export function attributeValueSize(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return numberSize(value.N);
  // On the wire (what dynalite sees) binary is base64 text; through the SDK it is bytes.
  const binary: unknown = value.B;
  if (typeof binary === 'string') return Buffer.from(binary, 'base64').length;
  if (value.B !== undefined) return value.B.length;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + utf8(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + numberSize(n), 0);
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.length, 0);
  if (value.BOOL !== undefined || value.NULL !== undefined) return 1;
  // Lists and maps: 3 bytes of their own, and one for each element beside the element itself.
  if (value.L !== undefined) return 3 + value.L.reduce((sum, element) => sum + 1 + attributeValueSize(element), 0);
  if (value.M !== undefined) return 3 + Object.keys(value.M).length + dynamoItemSize(value.M);
  return 0;
}

/** An item's size as DynamoDB counts it against 400 KB: the UTF-8 bytes of every attribute name plus its value. */
export function dynamoItemSize(item: Readonly<Record<string, AttributeValue>>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += utf8(name) + attributeValueSize(value);
  return size;
}

let patched = false;

/**
 * Makes every dynalite in this process size items in UTF-8 (idempotent). dynalite's actions reach the check through
 * its db module's export, which this replaces; its capacity arithmetic keeps its own estimate.
 */
export function sizeDynaliteItemsAsDynamoDb(): void {
  if (patched) return;
  const db = createRequire(import.meta.url)('dynalite/db/index.js') as { itemSize: ItemSize };
  const original = db.itemSize;
  db.itemSize = (item, compress, addMetaSize, rangeKey) =>
    compress || addMetaSize
      ? original(item, compress, addMetaSize, rangeKey)
      : Math.max(original(item), dynamoItemSize(item as Record<string, AttributeValue>));
  patched = true;
}
