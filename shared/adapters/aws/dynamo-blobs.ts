/**
 * Large values out of line. A DynamoDB item holds at most 400 KB, but a plan of 2,000 steps, a candidate plan, a
 * step's output or an approval's upstream outputs can each be larger. So the store never keeps a large string
 * attribute (every JSON field is one) inside its item: it writes the value as content-addressed parts
 * (`BLOB#<sha256>` / `PART#<n>`, each well under the item limit), and the item keeps a small reference. Reads put
 * the value back before anything decodes the item, so nothing above the adapter knows.
 *
 * Parts are written before the item that refers to them and never change (same content, same key), so a crash
 * between the two leaves only an unreferenced blob, and a repeated write is harmless.
 *
 * Who collects a part depends on whose it is (`BlobOwner`). A run's items (its partition, its approvals, its log's
 * announcements) keep their parts in the run's own blob partitions (`RUNBLOB#<runId>#<shard>`, the reference naming
 * the run): when the run expires, every part there goes with it (dynamo-retention.ts), whether an item still refers
 * to it or not (a value rewritten since, a write that failed after its parts). Any other item's parts stay
 * content-addressed (`BLOB#<sha256>`) and carry the item's own expiry, so TTL takes them with it; a part shared by
 * two such items carries the later writer's expiry, which is the later one. Parts written before run partitions
 * existed (references without a run) are read as before and left alone: another run may share them.
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NotFoundError } from '../../errors.ts';
import { encodeOutbox, OUTBOX_ATTRIBUTE, type OutboxEntry, type OutboxEvent } from '../../events/outbox.ts';
import type { Item } from './dynamo-attributes.ts';
import {
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  type ItemKey,
  itemKeys,
  PARTITION_KEY,
  runIdOfPartition,
  SORT_KEY,
  STATUS_PARTITION_KEY,
  STATUS_SORT_KEY,
  TTL_ATTRIBUTE,
} from './table-layout.ts';

/** A string attribute longer than this (UTF-16 code units, so at most 3× as many bytes) is stored out of line. */
export const INLINE_STRING_LIMIT = 16 * 1024;
/** Characters per part: at most 3 bytes each in UTF-8, so a part stays under 300 KB. */
const PART_CHARS = 100 * 1024;
/** Marks a map attribute as a reference to a blob; no JSON field is ever a DynamoDB map, so it cannot collide. */
export const BLOB_MARK = 'cairnBlob';

/** Keys and index keys are read by DynamoDB itself (key conditions): never moved. The outbox: see outboxValue. */
const PINNED = new Set([
  PARTITION_KEY,
  SORT_KEY,
  GSI1_PARTITION_KEY,
  GSI1_SORT_KEY,
  STATUS_PARTITION_KEY,
  STATUS_SORT_KEY,
  TTL_ATTRIBUTE,
]);

/** Whose the parts of a write are: a run's (kept in its blob partitions), or nobody's, expiring when given. */
export type BlobOwner =
  | { readonly runId: string }
  | { readonly runId?: undefined; readonly expiresAt?: AttributeValue };

const APPROVAL_PREFIX = 'APPROVAL#';

/**
 * The owner of the parts of a write to `pk`: the run of a run's item, or of an approval (which names its run); for
 * any other item, its own expiry (a put's `expiresAt`), which its parts then carry.
 */
export function blobOwner(pk: string | undefined, attributes: Item = {}): BlobOwner {
  const ofRun = pk === undefined ? undefined : runIdOfPartition(pk);
  if (ofRun !== undefined) return { runId: ofRun };
  const runId = attributes.runId?.S;
  if (pk?.startsWith(APPROVAL_PREFIX) && runId !== undefined) return { runId };
  const expiresAt = attributes[TTL_ATTRIBUTE];
  return expiresAt?.N === undefined ? {} : { expiresAt };
}

const partKey = (ref: Pick<BlobRef, 'hash' | 'runId'>, n: number): ItemKey =>
  ref.runId === undefined ? itemKeys.blobPart(ref.hash, n) : itemKeys.runBlobPart(ref.runId, ref.hash, n);

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

interface BlobRef {
  readonly hash: string;
  readonly parts: number;
  readonly chars: number;
  /** The run whose blob partitions hold the parts; absent: `BLOB#<hash>`. */
  readonly runId?: string | undefined;
}

/** Cuts the text into parts (pushed to `parts`) and returns what names them. */
function blob(text: string, parts: Item[], owner: BlobOwner): BlobRef {
  const hash = createHash('sha256').update(text, 'utf8').digest('hex');
  const cut = pieces(text);
  const { runId } = owner;
  const expiry: Item =
    owner.runId === undefined && owner.expiresAt !== undefined ? { [TTL_ATTRIBUTE]: owner.expiresAt } : {};
  cut.forEach((data, n) => {
    const key = partKey({ hash, runId }, n);
    parts.push({
      [PARTITION_KEY]: { S: key.PK },
      [SORT_KEY]: { S: key.SK },
      entity: { S: 'blob' },
      data: { S: data },
      ...expiry,
    });
  });
  return { hash, parts: cut.length, chars: text.length, runId };
}

function reference(text: string, parts: Item[], owner: BlobOwner): AttributeValue {
  const ref = blob(text, parts, owner);
  const run: Item = ref.runId === undefined ? {} : { run: { S: ref.runId } };
  return {
    M: { [BLOB_MARK]: { S: ref.hash }, parts: { N: String(ref.parts) }, chars: { N: String(ref.chars) }, ...run },
  };
}

/**
 * An announcement's outbox attribute. It stays a string (the stream filter and the relay read it from the image),
 * so it is never moved out of line whole; when it is too large for the item, its events are, and the attribute
 * keeps the announcement's id, run and time with a reference to them (`eventsRef`: `<hash>/<parts>/<chars>`), which
 * `outboxEventKeys` and `restoreOutboxEvents` read back. So no item grows with what one write announces.
 */
export function outboxValue(entry: OutboxEntry): Offloaded<AttributeValue> {
  const text = encodeOutbox(entry);
  if (text.length <= INLINE_STRING_LIMIT) return { value: { S: text }, parts: [] };
  const parts: Item[] = [];
  // The announcement's run owns them: they go when the run does.
  const ref = blob(JSON.stringify(entry.events), parts, { runId: entry.runId });
  const eventsRef = `${ref.hash}/${ref.parts}/${ref.chars}/run`;
  return {
    value: { S: encodeOutbox({ id: entry.id, runId: entry.runId, at: entry.at, events: [], eventsRef }) },
    parts,
  };
}

/** `<hash>/<parts>/<chars>`, then `/run` when the parts are in the announcement's run's blob partitions. */
const OUTBOX_REF = /^([0-9a-f]{64})\/(\d{1,6})\/(\d{1,12})(\/run)?$/;

function outboxRef(entry: OutboxEntry): BlobRef | undefined {
  const match = entry.eventsRef === undefined ? null : OUTBOX_REF.exec(entry.eventsRef);
  if (!match) return undefined;
  const runId = match[4] === undefined ? undefined : entry.runId;
  return { hash: match[1] as string, parts: Number(match[2]), chars: Number(match[3]), runId };
}

/** The keys of the parts holding the out-of-line events of these announcements. */
export function outboxEventKeys(entries: readonly OutboxEntry[]): ItemKey[] {
  return entries.flatMap((entry) => {
    const ref = outboxRef(entry);
    return ref === undefined ? [] : Array.from({ length: ref.parts }, (_, n) => partKey(ref, n));
  });
}

/** The announcements with their out-of-line events put back, from the parts read for them. */
export function restoreOutboxEvents(entries: readonly OutboxEntry[], parts: readonly Item[]): OutboxEntry[] {
  const byKey = partsByKey(parts);
  return entries.map((entry) => {
    if (entry.eventsRef === undefined) return entry;
    const ref = outboxRef(entry);
    if (ref === undefined) {
      throw new NotFoundError('an announcement names its events by a reference the store cannot read', {
        context: { runId: entry.runId, announcement: entry.id, eventsRef: entry.eventsRef },
      });
    }
    const text = joinParts(ref, byKey, { runId: entry.runId, announcement: entry.id });
    const { eventsRef: _ref, ...rest } = entry;
    return { ...rest, events: JSON.parse(text) as OutboxEvent[] };
  });
}

/** The item (or an update's attribute values) with every large string replaced by a reference to `owner`'s parts. */
export function offload(attributes: Item, owner: BlobOwner): Offloaded<Item> {
  const parts: Item[] = [];
  let changed: Item | undefined;
  for (const [name, value] of Object.entries(attributes)) {
    if (PINNED.has(name) || value.S === undefined || value.S.length <= INLINE_STRING_LIMIT) continue;
    changed ??= { ...attributes };
    if (name === OUTBOX_ATTRIBUTE) {
      // A put's outbox (an update sets its own through outboxValue): a string still, its events out of line.
      const outbox = outboxValue(JSON.parse(value.S) as OutboxEntry);
      changed[name] = outbox.value;
      parts.push(...outbox.parts);
    } else changed[name] = reference(value.S, parts, owner);
  }
  return { value: changed ?? attributes, parts };
}

function refOf(value: AttributeValue | undefined): BlobRef | undefined {
  const hash = value?.M?.[BLOB_MARK]?.S;
  if (hash === undefined || value?.M === undefined) return undefined;
  return { hash, parts: Number(value.M.parts?.N ?? 0), chars: Number(value.M.chars?.N ?? -1), runId: value.M.run?.S };
}

/** The keys of every part the items refer to. */
export function referencedParts(items: readonly Item[]): ItemKey[] {
  const keys: ItemKey[] = [];
  for (const item of items) {
    for (const value of Object.values(item)) {
      const ref = refOf(value);
      if (ref) for (let n = 0; n < ref.parts; n++) keys.push(partKey(ref, n));
    }
  }
  return keys;
}

const partsByKey = (parts: readonly Item[]): Map<string, Item> =>
  new Map(parts.map((part) => [`${part[PARTITION_KEY]?.S}\u0000${part[SORT_KEY]?.S}`, part]));

/** A blob's text from its parts (read for it), checked against the length written. */
function joinParts(ref: BlobRef, byKey: ReadonlyMap<string, Item>, context: Readonly<Record<string, unknown>>): string {
  let text = '';
  for (let n = 0; n < ref.parts; n++) {
    const key = partKey(ref, n);
    const data = byKey.get(`${key.PK}\u0000${key.SK}`)?.data?.S;
    if (data === undefined) {
      throw new NotFoundError(`a stored value is missing part ${n} of its blob`, {
        context: { blob: ref.hash, part: n, ...context },
      });
    }
    text += data;
  }
  if (text.length !== ref.chars) {
    throw new NotFoundError('a stored value came back with another length than was written', {
      context: { blob: ref.hash, chars: text.length, expected: ref.chars, ...context },
    });
  }
  return text;
}

/** The items with every reference replaced by its value, from the parts read for them. */
export function restore(items: readonly Item[], parts: readonly Item[]): Item[] {
  const byKey = partsByKey(parts);
  return items.map((item) => {
    let restored: Item | undefined;
    for (const [name, value] of Object.entries(item)) {
      const ref = refOf(value);
      if (!ref) continue;
      const context = { attribute: name, pk: item[PARTITION_KEY]?.S, sk: item[SORT_KEY]?.S };
      restored ??= { ...item };
      restored[name] = { S: joinParts(ref, byKey, context) };
    }
    return restored ?? item;
  });
}
