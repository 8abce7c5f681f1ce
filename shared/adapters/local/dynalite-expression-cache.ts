/**
 * dynalite parses every condition, update and projection expression with a PEG parser on every request; on the
 * embedded stack, where the store adapter sends the same few expressions hundreds of times a second, that parsing was
 * about a tenth of the process's CPU. This wraps dynalite's parsers with a cache of parse trees.
 *
 * An expression is cached by its shape: its text with each placeholder renamed by order of first appearance (`#a` →
 * `#n0`, `:v` → `:v0`), which of its names are the same attribute, and the types of its values: an expression that
 * names a map member (`#m.#<key>`) differs in text for every key while its shape is one. A tree is parsed once per
 * shape, with each name standing in as a sentinel string and each value as itself, and kept with values replaced by
 * placeholders; a hit builds a fresh tree (dynalite's actions mutate it) with this request's names and values in place,
 * and marks the names and values the expression used as used, as the parser does. The parser's checks depend on names
 * only through their equality (paths that overlap, conflict or repeat), which the shape keeps; a name that is also
 * spelled out as a literal word of the expression would compare equal to it, so such a request is parsed as before. So
 * are expressions whose checks read the values themselves (BETWEEN compares its bounds, attribute_type reads its type
 * name), a shape whose parse is an error (the error is parsed again from the request, to name its placeholders), and a
 * tree that holds a name other than as a whole string.
 */
import { createRequire } from 'node:module';

type AttributeValue = Record<string, unknown>;

interface ParseContext {
  attrNames?: Record<string, string>;
  attrVals?: Record<string, AttributeValue>;
  unusedAttrNames?: Record<string, boolean>;
  unusedAttrVals?: Record<string, boolean>;
}

interface Parser {
  parse(input: string, options: { context: ParseContext }): unknown;
}

/** An expression's text read once: its shape and its placeholders in order of first appearance. */
interface Text {
  readonly shape: string;
  readonly names: readonly string[];
  readonly values: readonly string[];
  /** The words of the expression that are not placeholders (attribute names spelled out, keywords, functions). */
  readonly words: ReadonlySet<string>;
}

interface Entry {
  readonly tree: unknown;
  /** Positions (in `Text.names` / `Text.values`) of the placeholders the parser marked as used. */
  readonly usedNames: readonly number[];
  readonly usedValues: readonly number[];
}

/** A stand-in for an attribute value in a cached tree: its position in `Text.values`. */
class Placeholder {
  constructor(readonly index: number) {}
}

const TYPES = ['S', 'N', 'B', 'NULL', 'BOOL', 'SS', 'NS', 'BS', 'L', 'M'] as const;
const VALUE_DEPENDENT = /between|attribute_type/i;
const WORD = /([#:]?)([A-Za-z0-9_]+)/g;
/** Bounds each map (the store adapter's shapes number in the dozens; a client sending ad hoc ones does not grow it). */
const MAX_ENTRIES = 2000;
/** A name in a tree being parsed for its shape: the `i`-th distinct attribute the expression names. */
const SENTINEL = '\u0000';
const sentinel = (i: number): string => `${SENTINEL}${i}`;

const typeOf = (value: AttributeValue | undefined): string =>
  value === undefined ? '?' : (TYPES.find((t) => value[t] !== undefined && value[t] !== null) ?? '?');

function readText(input: string): Text {
  const names: string[] = [];
  const values: string[] = [];
  const words = new Set<string>();
  const shape = input.replace(WORD, (word, sigil: string, rest: string) => {
    if (sigil === '') {
      words.add(rest);
      return word;
    }
    const list = sigil === '#' ? names : values;
    let at = list.indexOf(word);
    if (at < 0) at = list.push(word) - 1;
    return `${sigil}${sigil === '#' ? 'n' : 'v'}${at}`;
  });
  return { shape, names, values, words };
}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** Copies a parse tree, swapping the values found in `byValue` for placeholders (template). */
function templateOf(node: unknown, byValue: Map<unknown, number>): unknown {
  if (node === null || typeof node !== 'object') return node;
  const index = byValue.get(node);
  if (index !== undefined) return new Placeholder(index);
  if (Array.isArray(node)) return node.map((item) => templateOf(item, byValue));
  if (!isPlainObject(node)) return node;
  const copy = Object.create(Object.getPrototypeOf(node)) as Record<string, unknown>;
  for (const key of Object.keys(node)) copy[key] = templateOf((node as Record<string, unknown>)[key], byValue);
  return copy;
}

/** A fresh tree from a template: this request's values for placeholders, its attribute names for sentinels. */
function treeOf(node: unknown, names: readonly string[], values: readonly unknown[]): unknown {
  if (typeof node === 'string') return node.startsWith(SENTINEL) ? names[Number(node.slice(1))] : node;
  if (node === null || typeof node !== 'object') return node;
  if (node instanceof Placeholder) return values[node.index];
  if (Array.isArray(node)) return node.map((item) => treeOf(item, names, values));
  if (!isPlainObject(node)) return node;
  const copy = Object.create(Object.getPrototypeOf(node)) as Record<string, unknown>;
  for (const key of Object.keys(node)) {
    const name = key.startsWith(SENTINEL) ? (names[Number(key.slice(1))] as string) : key;
    copy[name] = treeOf((node as Record<string, unknown>)[key], names, values);
  }
  return copy;
}

/** A string holding no sentinel, or one sentinel and nothing else. */
const wholeOrNone = (text: string): boolean =>
  !text.includes(SENTINEL) || (text.lastIndexOf(SENTINEL) === 0 && /^\d+$/.test(text.slice(1)));

/** Whether every sentinel in a tree is a whole string (a path element or a key), so that treeOf finds it. */
function sentinelsWhole(node: unknown): boolean {
  if (typeof node === 'string') return wholeOrNone(node);
  if (node === null || typeof node !== 'object' || node instanceof Placeholder) return true;
  if (Array.isArray(node)) return node.every(sentinelsWhole);
  if (!isPlainObject(node)) return true;
  return Object.entries(node).every(([key, value]) => wholeOrNone(key) && sentinelsWhole(value));
}

function cached(parser: Parser): Parser['parse'] {
  const original = parser.parse.bind(parser);
  const texts = new Map<string, Text>();
  const entries = new Map<string, Entry>();
  return (input, options) => {
    const { context } = options;
    if (VALUE_DEPENDENT.test(input)) return original(input, options);
    let text = texts.get(input);
    if (text === undefined) {
      if (texts.size >= MAX_ENTRIES) texts.clear();
      text = readText(input);
      texts.set(input, text);
    }
    const attrNames = context.attrNames ?? {};
    const attrVals = context.attrVals ?? {};
    // The attributes named, each once, and which of them every name placeholder is.
    const distinct: string[] = [];
    const which: number[] = [];
    for (const placeholder of text.names) {
      const name = attrNames[placeholder];
      if (name === undefined || text.words.has(name)) return original(input, options);
      let at = distinct.indexOf(name);
      if (at < 0) at = distinct.push(name) - 1;
      which.push(at);
    }
    const values = text.values.map((placeholder) => attrVals[placeholder]);
    const key = `${text.shape}\u0000${which.join(',')}\u0000${values.map(typeOf).join(',')}`;
    let entry = entries.get(key);
    if (entry === undefined) {
      entry = parseShape(original, text, which, values, context);
      if (entry === undefined) return original(input, options);
      if (entries.size >= MAX_ENTRIES) entries.clear();
      entries.set(key, entry);
    }
    for (const i of entry.usedNames) delete context.unusedAttrNames?.[text.names[i] as string];
    for (const i of entry.usedValues) delete context.unusedAttrVals?.[text.values[i] as string];
    return treeOf(entry.tree, distinct, values);
  };
}

/** Parses an expression's shape (names as sentinels); undefined when the parse is an error or not cacheable. */
function parseShape(
  original: Parser['parse'],
  text: Text,
  which: readonly number[],
  values: readonly (AttributeValue | undefined)[],
  context: ParseContext,
): Entry | undefined {
  const attrNames = Object.fromEntries(text.names.map((_, i) => [`#n${i}`, sentinel(which[i] as number)]));
  const attrVals = Object.fromEntries(values.map((value, i) => [`:v${i}`, value]));
  const probe: ParseContext = {
    ...context,
    attrNames,
    attrVals: attrVals as Record<string, AttributeValue>,
    unusedAttrNames: Object.fromEntries(Object.keys(attrNames).map((n) => [n, true])),
    unusedAttrVals: Object.fromEntries(Object.keys(attrVals).map((n) => [n, true])),
  };
  let tree: unknown;
  try {
    tree = original(text.shape, { context: probe });
  } catch {
    return undefined;
  }
  if (tree === null || typeof tree !== 'object') return undefined;
  const byValue = new Map<unknown, number>(values.map((value, i) => [value, i]));
  const template = templateOf(tree, byValue);
  if (!sentinelsWhole(template)) return undefined;
  const used = (all: readonly string[], sigil: string, unused: Record<string, boolean> | undefined) =>
    all.flatMap((_, i) => (`${sigil}${i}` in (unused ?? {}) ? [] : [i]));
  return {
    tree: template,
    usedNames: used(text.names, '#n', probe.unusedAttrNames),
    usedValues: used(text.values, ':v', probe.unusedAttrVals),
  };
}

let installed = false;

/** Wraps dynalite's expression parsers (once per process; every dynalite in the process shares them). */
export function cacheDynaliteExpressions(): void {
  if (installed) return;
  installed = true;
  const fromDynalite = createRequire(createRequire(import.meta.url).resolve('dynalite'));
  for (const name of ['conditionParser', 'updateParser', 'projectionParser']) {
    const parser = fromDynalite(`./db/${name}`) as Parser;
    parser.parse = cached(parser);
  }
}
