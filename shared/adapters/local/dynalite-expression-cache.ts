/**
 * dynalite parses every condition, update and projection expression with a PEG parser on every request; on the
 * embedded stack, where the store adapter sends the same few expressions hundreds of times a second, that parsing was
 * about a tenth of the process's CPU. This wraps dynalite's parsers with a cache of parse trees.
 *
 * A tree embeds the request's attribute values (by reference) and the parser checks only their types, so a tree is
 * cached per expression, attribute names and the types of the attribute values, with each value replaced by a
 * placeholder; a hit builds a fresh tree (dynalite's actions mutate it) with this request's values in place, and
 * marks the names and values the expression used as used, as the parser does. Expressions whose checks read the
 * values themselves (BETWEEN compares its bounds, attribute_type reads its type name) and trees that are errors are
 * never cached: they are parsed as before.
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

interface Entry {
  readonly tree: unknown;
  readonly usedNames: readonly string[];
  readonly usedValues: readonly string[];
}

/** A stand-in for an attribute value in a cached tree. */
class Placeholder {
  constructor(readonly name: string) {}
}

const TYPES = ['S', 'N', 'B', 'NULL', 'BOOL', 'SS', 'NS', 'BS', 'L', 'M'] as const;
const VALUE_DEPENDENT = /between|attribute_type/i;
/** Bounds the cache (the store adapter's expressions number in the dozens; a client sending ad hoc ones does not grow it). */
const MAX_ENTRIES = 2000;

const typeOf = (value: AttributeValue | undefined): string =>
  value === undefined ? '?' : (TYPES.find((t) => value[t] !== undefined && value[t] !== null) ?? '?');

function keyOf(input: string, context: ParseContext): string {
  const values = context.attrVals ?? {};
  const types = Object.keys(values)
    .map((name) => `${name}=${typeOf(values[name])}`)
    .join(',');
  return `${input}\u0000${JSON.stringify(context.attrNames ?? null)}\u0000${types}`;
}

const isPlainObject = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** Copies a parse tree, swapping the values found in `byValue` for placeholders (template) or back (`values`). */
function copyTree(
  node: unknown,
  byValue: Map<unknown, string> | undefined,
  values: Record<string, AttributeValue> | undefined,
): unknown {
  if (node === null || typeof node !== 'object') return node;
  if (byValue?.has(node)) return new Placeholder(byValue.get(node) ?? '');
  if (node instanceof Placeholder) return values?.[node.name];
  if (Array.isArray(node)) return node.map((item) => copyTree(item, byValue, values));
  if (!isPlainObject(node)) return node;
  const copy = Object.create(Object.getPrototypeOf(node)) as Record<string, unknown>;
  for (const key of Object.keys(node)) copy[key] = copyTree((node as Record<string, unknown>)[key], byValue, values);
  return copy;
}

function cached(parser: Parser): Parser['parse'] {
  const original = parser.parse.bind(parser);
  const entries = new Map<string, Entry>();
  return (input, options) => {
    const { context } = options;
    if (VALUE_DEPENDENT.test(input)) return original(input, options);
    const key = keyOf(input, context);
    const hit = entries.get(key);
    if (hit) {
      for (const name of hit.usedNames) delete context.unusedAttrNames?.[name];
      for (const name of hit.usedValues) delete context.unusedAttrVals?.[name];
      return copyTree(hit.tree, undefined, context.attrVals);
    }
    // Parsed against every name and value as unused, so what it uses is the expression's own, whatever other
    // expressions of the request used before it.
    const all = (names: object | undefined) => Object.fromEntries(Object.keys(names ?? {}).map((n) => [n, true]));
    const probe: ParseContext = {
      ...context,
      unusedAttrNames: all(context.attrNames),
      unusedAttrVals: all(context.attrVals),
    };
    const tree = original(input, { context: probe });
    const usedNames = Object.keys(context.attrNames ?? {}).filter((n) => !(n in (probe.unusedAttrNames ?? {})));
    const usedValues = Object.keys(context.attrVals ?? {}).filter((n) => !(n in (probe.unusedAttrVals ?? {})));
    for (const name of usedNames) delete context.unusedAttrNames?.[name];
    for (const name of usedValues) delete context.unusedAttrVals?.[name];
    if (tree === null || typeof tree !== 'object') return tree;
    const byValue = new Map<unknown, string>(Object.entries(context.attrVals ?? {}).map(([name, v]) => [v, name]));
    if (entries.size >= MAX_ENTRIES) entries.clear();
    entries.set(key, { tree: copyTree(tree, byValue, undefined), usedNames, usedValues });
    return tree;
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
