/**
 * Large values out of line. A DynamoDB item holds at most 400 KB, but a plan of 2,000 steps, a candidate plan, a
 * step's output or an approval's upstream outputs can each be larger. So the store never keeps a large string
 * attribute (every JSON field is one) inside its item: it writes the value as content-addressed parts
 * (`BLOB#<sha256>` / `PART#<n>`, each well under the item limit), and the item keeps a small reference. Reads put
 * the value back before anything decodes the item, so nothing above the adapter knows.
 *
 * Parts are written before the item that refers to them and never change (same content, same key), so a crash
 * between the two leaves only an unreferenced blob, and a repeated write is harmless. Unreferenced parts are not
 * collected (a deployed table can expire them with a TTL sweep later; they are never read).
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NotFoundError } from '../../errors.ts';
import { OUTBOX_ATTRIBUTE } from '../../events/outbox.ts';
import type { Item } from './dynamo-attributes.ts';
import { GSI1_PARTITION_KEY, GSI1_SORT_KEY, type ItemKey, itemKeys, PARTITION_KEY, SORT_KEY } from './table-layout.ts';

/** A string attribute longer than this (UTF-16 code units, so at most 3× as many bytes) is stored out of line. */
export const INLINE_STRING_LIMIT = 16 * 1024;
/** Characters per part: at most 3 bytes each in UTF-8, so a part stays under 300 KB. */
const PART_CHARS = 100 * 1024;
/** Marks a map attribute as a reference to a blob; no JSON field is ever a DynamoDB map, so it cannot collide. */
export const BLOB_MARK = 'cairnBlob';

/** Keys, index keys and the outbox are read by DynamoDB itself (key conditions, stream filters): never moved. */
const PINNED = new Set([PARTITION_KEY, SORT_KEY, GSI1_PARTITION_KEY, GSI1_SORT_KEY, OUTBOX_ATTRIBUTE]);

const blobPartKey = itemKeys.blobPart;

/** What a write must put first: the parts of every value it moves out of line. */
export interface Offloaded<T> {
  readonly value: T;
  readonly parts: readonly Item[];
}

/**
 * The text cut into parts of at most PART_CHARS, never between the two halves of a surrogate pair: DynamoDB keeps
 * strings as UTF-8, which has no half of a character, so a part ending in one would be refused or altered.
 */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(at + PART_CHARS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}

function reference(text: string, parts: Item[]): AttributeValue {
  const hash = createHash('sha256').update(text, 'utf8').digest('hex');
  const cut = pieces(text);
  cut.forEach((data, n) => {
    const key = blobPartKey(hash, n);
    parts.push({
      [PARTITION_KEY]: { S: key.PK },
      [SORT_KEY]: { S: key.SK },
      entity: { S: 'blob' },
      data: { S: data },
    });
  });
  return { M: { [BLOB_MARK]: { S: hash }, parts: { N: String(cut.length) }, chars: { N: String(text.length) } } };
}

/** The item (or an update's attribute values) with every large string replaced by a reference. */
export function offload(attributes: Item): Offloaded<Item> {
  const parts: Item[] = [];
  let changed: Item | undefined;
  for (const [name, value] of Object.entries(attributes)) {
    if (PINNED.has(name) || value.S === undefined || value.S.length <= INLINE_STRING_LIMIT) continue;
    changed ??= { ...attributes };
    changed[name] = reference(value.S, parts);
  }
  return { value: changed ?? attributes, parts };
}

interface BlobRef {
  readonly hash: string;
  readonly parts: number;
  readonly chars: number;
}

function refOf(value: AttributeValue | undefined): BlobRef | undefined {
  const hash = value?.M?.[BLOB_MARK]?.S;
  if (hash === undefined || value?.M === undefined) return undefined;
  return { hash, parts: Number(value.M.parts?.N ?? 0), chars: Number(value.M.chars?.N ?? -1) };
}

/** The keys of every part the items refer to. */
export function referencedParts(items: readonly Item[]): ItemKey[] {
  const keys: ItemKey[] = [];
  for (const item of items) {
    for (const value of Object.values(item)) {
      const ref = refOf(value);
      if (ref) for (let n = 0; n < ref.parts; n++) keys.push(blobPartKey(ref.hash, n));
    }
  }
  return keys;
}

/** The items with every reference replaced by its value, from the parts read for them. */
export function restore(items: readonly Item[], parts: readonly Item[]): Item[] {
  const byKey = new Map(parts.map((part) => [`${part[PARTITION_KEY]?.S}\u0000${part[SORT_KEY]?.S}`, part]));
  return items.map((item) => {
    let restored: Item | undefined;
    for (const [name, value] of Object.entries(item)) {
      const ref = refOf(value);
      if (!ref) continue;
      let text = '';
      for (let n = 0; n < ref.parts; n++) {
        const key = blobPartKey(ref.hash, n);
        const data = byKey.get(`${key.PK}\u0000${key.SK}`)?.data?.S;
        if (data === undefined) {
          throw new NotFoundError(`a stored value is missing part ${n} of its blob`, {
            context: { blob: ref.hash, part: n, attribute: name, pk: item[PARTITION_KEY]?.S, sk: item[SORT_KEY]?.S },
          });
        }
        text += data;
      }
      if (text.length !== ref.chars) {
        throw new NotFoundError('a stored value came back with another length than was written', {
          context: { blob: ref.hash, attribute: name, chars: text.length, expected: ref.chars },
        });
      }
      restored ??= { ...item };
      restored[name] = { S: text };
    }
    return restored ?? item;
  });
}
