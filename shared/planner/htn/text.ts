/**
 * Text helpers for methods: objective text is user input, so everything taken from it goes into a plan either as
 * a safe literal or as a quoted JSONata string, and into ids only as a bounded slug.
 */
import { EXPRESSION_PATTERN } from '../../plan/schema.ts';

/** Wraps JSONata into the plan's expression form. */
export const expr = (body: string): string => `{% ${body} %}`;

/** A JSONata string literal holding `text` verbatim (JSON string escapes are JSONata string escapes). */
export const quote = (text: string): string => JSON.stringify(text);

/**
 * A string that stays a literal in a plan: user text that happens to look like `{% … %}` would otherwise be
 * evaluated at run time, so it becomes an expression that yields the text itself.
 */
export const literal = (text: string): string => (EXPRESSION_PATTERN.test(text) ? expr(quote(text)) : text);

const RESERVED = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `$outputs.<id>`, with the id backquoted when it is not a plain JSONata name (dots and dashes are operators). */
export const outputRef = (id: string): string =>
  PLAIN_NAME.test(id) && !RESERVED.has(id) ? `$outputs.${id}` : `$outputs.\`${id}\``;

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/** Collapses whitespace and bounds the length (in UTF-16 units, as the plan schema counts), never splitting a pair. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  let cut = flat.slice(0, Math.max(0, max - 1));
  if (cut.length > 0 && isHighSurrogate(cut.charCodeAt(cut.length - 1))) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}

/** A lower-case id segment from free text: ASCII letters and digits joined by dashes, at most `max` chars. */
export function slug(text: string, max = 24): string {
  const words = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
  let out = '';
  for (const word of words) {
    const next = out ? `${out}-${word}` : word;
    if (next.length > max) {
      if (!out) out = word.slice(0, max);
      break;
    }
    out = next;
  }
  return out;
}

/** One distinct key per label, in order: slugs, with `fallback-N` for labels without letters or digits and `-2`, `-3` … on clashes. */
export function uniqueKeys(labels: readonly string[], fallback: string, max = 24): string[] {
  const used = new Set<string>();
  return labels.map((label, i) => {
    const base = slug(label, max - 3) || `${fallback}-${i + 1}`;
    let key = base;
    for (let n = 2; used.has(key); n += 1) key = `${base}-${n}`;
    used.add(key);
    return key;
  });
}

/** The named groups of the first pattern that matches, or undefined. */
export function firstMatch(patterns: readonly RegExp[], text: string): Record<string, string> | undefined {
  for (const pattern of patterns) {
    const groups = pattern.exec(text)?.groups;
    if (groups)
      return Object.fromEntries(Object.entries(groups).filter((e): e is [string, string] => e[1] !== undefined));
  }
  return undefined;
}

/** A service or artifact name captured from an objective, without the sentence punctuation that may trail it. */
export const trimName = (name: string, max = 64): string => name.slice(0, max).replace(/[._-]+$/, '');
