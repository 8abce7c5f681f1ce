/**
 * Attribute codecs: how one record field is written to and read from a DynamoDB attribute. Scalars that conditions
 * look at (status, generation, remaining, released, claimedBy) are native attributes; free-form JSON (plans,
 * outputs, evidence) is stored as a JSON string, which keeps numbers exact, avoids the 32-level nesting limit and
 * makes the size guard honest.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { CairnError, PayloadTooLargeError } from '../../errors.ts';
import { MAX_ITEM_BYTES } from './table-layout.ts';

export type Item = Record<string, AttributeValue>;

export interface FieldCodec<T> {
  /** undefined → the attribute is left out (DynamoDB sets cannot be empty). */
  encode(value: T): AttributeValue | undefined;
  decode(value: AttributeValue, field: string): T;
  /** Value of a missing attribute, for fields that are stored only when non-empty. */
  readonly missing?: () => T;
}

const decodeError = (field: string, expected: string): CairnError =>
  new CairnError('StoreDecodeError', `stored attribute ${field} is not ${expected}`, { context: { field } });

export const stringField: FieldCodec<string> = {
  encode: (value) => ({ S: value }),
  decode: (value, field) => {
    if (value.S === undefined) throw decodeError(field, 'a string');
    return value.S;
  },
};

export const numberField: FieldCodec<number> = {
  encode: (value) => ({ N: String(value) }),
  decode: (value, field) => {
    const n = value.N === undefined ? Number.NaN : Number(value.N);
    if (!Number.isFinite(n)) throw decodeError(field, 'a number');
    return n;
  },
};

export const jsonField: FieldCodec<unknown> = {
  encode: (value) => ({ S: JSON.stringify(value) }),
  decode: (value, field) => {
    if (value.S === undefined) throw decodeError(field, 'a JSON string');
    try {
      return JSON.parse(value.S) as unknown;
    } catch (cause) {
      throw new CairnError('StoreDecodeError', `stored attribute ${field} is not valid JSON`, { cause });
    }
  },
};

/** A JSON field typed as what the store itself wrote there (the store only reads back its own writes). */
export const json = <T>(): FieldCodec<T> => jsonField as FieldCodec<T>;

/** A string that must be one of `values` (statuses, kinds): a corrupt item fails loudly instead of leaking. */
export function enumField<T extends string>(values: readonly T[]): FieldCodec<T> {
  return {
    encode: (value) => ({ S: value }),
    decode: (value, field) => {
      const text = stringField.decode(value, field);
      if (!(values as readonly string[]).includes(text)) throw decodeError(field, `one of ${values.join(', ')}`);
      return text as T;
    },
  };
}

/** `null` is kept as DynamoDB NULL so that a record round-trips exactly (`error: null` ≠ no error field). */
export function nullable<T>(inner: FieldCodec<T>): FieldCodec<T | null> {
  return {
    encode: (value) => (value === null ? { NULL: true } : inner.encode(value)),
    decode: (value, field) => (value.NULL === true ? null : inner.decode(value, field)),
  };
}

export const stringListField: FieldCodec<readonly string[]> = {
  encode: (value) => ({ L: value.map((s) => ({ S: s })) }),
  decode: (value, field) => {
    if (value.L === undefined) throw decodeError(field, 'a list');
    return value.L.map((entry) => stringField.decode(entry, field));
  },
  missing: () => [],
};

/** A string set; an empty set is not stored (DynamoDB rejects empty sets) and reads back as []. */
/** Names to numbers, as a map attribute (a condition can compare one entry); an empty map is left out. */
export const numberMapField: FieldCodec<Readonly<Record<string, number>>> = {
  encode: (value) => {
    const entries = Object.entries(value);
    return entries.length === 0 ? undefined : { M: Object.fromEntries(entries.map(([k, n]) => [k, { N: String(n) }])) };
  },
  decode: (value, field) => {
    if (value.M === undefined) throw decodeError(field, 'a map');
    return Object.fromEntries(
      Object.entries(value.M).map(([k, v]) => {
        const n = Number(v.N);
        if (v.N === undefined || !Number.isFinite(n)) throw decodeError(field, 'a map of numbers');
        return [k, n];
      }),
    );
  },
};

export const stringSetField: FieldCodec<readonly string[]> = {
  encode: (value) => (value.length === 0 ? undefined : { SS: [...new Set(value)] }),
  decode: (value, field) => {
    if (value.SS === undefined) throw decodeError(field, 'a string set');
    return [...value.SS].sort();
  },
  missing: () => [],
};

export type FieldCodecs<R> = { readonly [K in keyof R]-?: FieldCodec<Exclude<R[K], undefined>> };

/** Encodes the defined fields of `record` (undefined fields are left out). */
export function encodeFields<R extends object>(codecs: FieldCodecs<R>, record: Partial<R>): Item {
  const item: Item = {};
  for (const [field, value] of Object.entries(record)) {
    if (value === undefined) continue;
    const codec = (codecs as Record<string, FieldCodec<unknown> | undefined>)[field];
    if (codec === undefined) continue;
    const encoded = codec.encode(value);
    if (encoded !== undefined) item[field] = encoded;
  }
  return item;
}

/** Decodes every field the codecs know; `required` fields must be present. */
export function decodeFields<R extends object>(codecs: FieldCodecs<R>, item: Item, required: readonly (keyof R)[]): R {
  const record: Record<string, unknown> = {};
  for (const [field, codec] of Object.entries(codecs) as [string, FieldCodec<unknown>][]) {
    const value = item[field];
    if (value !== undefined) record[field] = codec.decode(value, field);
    else if (codec.missing !== undefined) record[field] = codec.missing();
  }
  for (const field of required) {
    if (record[field as string] === undefined) throw decodeError(String(field), 'present');
  }
  return record as R;
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** DynamoDB's item size rule: attribute name bytes plus value bytes (close enough for a guard). */
export function attributeSize(value: AttributeValue): number {
  if (value.S !== undefined) return utf8Bytes(value.S);
  if (value.N !== undefined) return Math.ceil(value.N.length / 2) + 1;
  if (value.B !== undefined) return value.B.byteLength;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + utf8Bytes(s), 0);
  if (value.NS !== undefined) return value.NS.reduce((sum, n) => sum + Math.ceil(n.length / 2) + 1, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + attributeSize(v), 0);
  if (value.M !== undefined) return 3 + itemSize(value.M);
  return 1;
}

export function itemSize(item: Item): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) total += utf8Bytes(name) + attributeSize(value);
  return total;
}

/** Refuses an item (or the values of an update) larger than MAX_ITEM_BYTES, before it reaches DynamoDB. */
export function guardSize(attributes: Item, context: Readonly<Record<string, unknown>>): void {
  const bytes = itemSize(attributes);
  if (bytes > MAX_ITEM_BYTES) {
    throw new PayloadTooLargeError(
      `item of ${bytes} bytes exceeds the store's limit of ${MAX_ITEM_BYTES} bytes; store large results out of line`,
      { context: { ...context, bytes, limit: MAX_ITEM_BYTES } },
    );
  }
}
