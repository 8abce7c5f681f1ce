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

/** A number's significant digits (no sign, exponent, point, leading or trailing zeros), as dynalite's Big counts them. */
function significantDigits(text: string): number {
  return text
    .replace(/^[-+]/, '')
    .replace(/[eE].*$/, '')
    .replace('.', '')
    .replace(/^0+/, '')
    .replace(/0+$/, '').length;
}

/** A number's size: about one byte per two significant digits, plus one (DynamoDB's documented estimate). */
function numberSize(text: string): number {
  const digits = significantDigits(text);
  return digits === 0 ? 1 : Math.ceil(digits / 2) + 1 + (text.startsWith('-') ? 1 : 0);
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

/**
 * Whether dynalite's own count of an item can exceed `dynamoItemSize`. It counts strings and names in UTF-16 code
 * units (never more than their UTF-8 bytes), everything else as DynamoDB does, except a number of an even count of
 * significant digits, for which it may count one byte more: so only an item holding such a number needs it.
 */
const evenDigits = (text: string): boolean => {
  const digits = significantDigits(text);
  return digits > 0 && digits % 2 === 0;
};

function dynaliteMayCountMore(value: Readonly<Record<string, AttributeValue>> | readonly AttributeValue[]): boolean {
  for (const member of Object.values(value) as AttributeValue[]) {
    if (member.N !== undefined && evenDigits(member.N)) return true;
    if (member.NS?.some(evenDigits)) return true;
    if (member.L !== undefined && dynaliteMayCountMore(member.L)) return true;
    if (member.M !== undefined && dynaliteMayCountMore(member.M)) return true;
  }
  return false;
}

let patched = false;

/**
 * Makes every dynalite in this process size items in UTF-8 (idempotent). dynalite's actions reach the check through
 * its db module's export, which this replaces; its capacity arithmetic keeps its own estimate. The size is the larger
 * of the two counts; dynalite's own is computed (with big.js, per number) only for an item where it can be larger.
 */
export function sizeDynaliteItemsAsDynamoDb(): void {
  if (patched) return;
  const db = createRequire(import.meta.url)('dynalite/db/index.js') as { itemSize: ItemSize };
  const original = db.itemSize;
  db.itemSize = (item, compress, addMetaSize, rangeKey) => {
    if (compress || addMetaSize) return original(item, compress, addMetaSize, rangeKey);
    const size = dynamoItemSize(item as Record<string, AttributeValue>);
    return dynaliteMayCountMore(item as Record<string, AttributeValue>) ? Math.max(original(item), size) : size;
  };
  patched = true;
}
