/**
 * Deterministic fake data for the demo capabilities: everything is derived from a hash of the input, so the same
 * input always gives the same answer (no randomness, no network). Also a generic generator that produces a value
 * matching a JSON Schema, for catalog targets the demo pack has no hand-written fake for.
 */

/** 32-bit FNV-1a of a string. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** A seeded generator (mulberry32): the same seed yields the same sequence. */
export interface Rng {
  /** 0 ≤ x < 1 */
  next(): number;
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
}

export function rngFor(...parts: readonly unknown[]): Rng {
  let state = hash32(JSON.stringify(parts) ?? '');
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return { next, int, pick: <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T };
}

export const hex = (rng: Rng, length: number): string =>
  Array.from({ length }, () => '0123456789abcdef'[rng.int(0, 15)]).join('');

export const slug = (text: string, max = 48): string =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/g, '') || 'item';

export const titleCase = (text: string): string => text.replace(/\b[a-z]/g, (c) => c.toUpperCase());

/** Every string value inside a JSON value that looks like an http(s) URL, deduplicated, in order. */
export function urlsIn(value: unknown, limit = 50): string[] {
  const found = new Set<string>();
  const pending: unknown[] = [value];
  while (pending.length > 0 && found.size < limit) {
    const current = pending.shift();
    if (typeof current === 'string') {
      if (/^https?:\/\/\S+$/.test(current)) found.add(current);
    } else if (Array.isArray(current)) pending.push(...current);
    else if (typeof current === 'object' && current !== null) pending.push(...Object.values(current));
  }
  return [...found];
}

/** Every object inside a JSON value (arrays flattened at any depth) that has all the given keys. */
export function objectsWith(value: unknown, keys: readonly string[]): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const current = pending.shift();
    if (Array.isArray(current)) pending.push(...current);
    else if (typeof current === 'object' && current !== null) {
      const record = current as Record<string, unknown>;
      if (keys.every((k) => Object.hasOwn(record, k))) found.push(record);
      else pending.push(...Object.values(record));
    }
  }
  return found;
}

export const field = (input: unknown, name: string): unknown =>
  typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[name] : undefined;
export const text = (input: unknown, name: string, fallback = ''): string => {
  const value = field(input, name);
  return typeof value === 'string' ? value : fallback;
};
export const integer = (input: unknown, name: string, fallback: number): number => {
  const value = field(input, name);
  return typeof value === 'number' && Number.isInteger(value) ? value : fallback;
};

const WORDS = ['alpha', 'delta', 'harbor', 'signal', 'vector', 'summit', 'meadow', 'copper', 'lumen', 'orbit'];
type Schema = Readonly<Record<string, unknown>>;
const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

function resolve(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#')) return schema;
  let node: unknown = root;
  for (const part of ref
    .slice(2)
    .split('/')
    .filter((p) => p.length > 0))
    node = isSchema(node) ? node[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isSchema(node) ? node : {};
}

/**
 * A value that matches common JSON Schema shapes (type, enum, const, properties/required, items, min/max, $ref):
 * good enough for a demo placeholder; exotic schemas (oneOf with discriminators, patterns) may not be satisfied.
 */
export function fakeFromSchema(schema: unknown, rng: Rng, root: unknown = schema, depth = 0): unknown {
  if (!isSchema(schema) || depth > 8) return null;
  const s = resolve(schema, isSchema(root) ? root : {});
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return rng.pick(s.enum);
  const variants = (s.anyOf ?? s.oneOf) as unknown;
  if (Array.isArray(variants) && variants.length > 0) return fakeFromSchema(variants[0], rng, root, depth + 1);
  const type = Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? 'null') : s.type;
  const num = (key: string, fallback: number) => (typeof s[key] === 'number' ? (s[key] as number) : fallback);
  switch (type) {
    case 'string': {
      if (typeof s.pattern === 'string' && s.pattern.startsWith('^https?://'))
        return `https://example.com/${rng.pick(WORDS)}`;
      const word = `${rng.pick(WORDS)}-${rng.int(1, 999)}`;
      return word.padEnd(num('minLength', 0), 'x').slice(0, num('maxLength', 200));
    }
    case 'integer':
      return rng.int(Math.ceil(num('minimum', 0)), Math.floor(num('maximum', Math.max(num('minimum', 0), 100))));
    case 'number':
      return Math.round((num('minimum', 0) + rng.next() * (num('maximum', 1) - num('minimum', 0))) * 100) / 100;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const count = Math.max(num('minItems', 0), Math.min(num('maxItems', 3), 3));
      return Array.from({ length: count }, () => fakeFromSchema(s.items ?? {}, rng, root, depth + 1));
    }
    default: {
      const properties = isSchema(s.properties) ? s.properties : {};
      const required = Array.isArray(s.required) ? (s.required as string[]) : [];
      const result: Record<string, unknown> = {};
      for (const key of required) result[key] = fakeFromSchema(properties[key], rng, root, depth + 1);
      return result;
    }
  }
}
