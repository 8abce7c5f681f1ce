/**
 * Plan expressions that are only a lookup, answered without the sandbox: `$objective`, `$outputs.a.value`,
 * `` $outputs.`b`.text ``, `$output.score`, `$input.id`, and an array of them (`[$objective, $outputs.a.value]`).
 * Most expressions in plans are of this form, and each would otherwise cost a round trip to an expression worker
 * process on the step's path (shared/adapters/expressions).
 *
 * Why this is safe outside the sandbox: the sandbox exists because JSONata is a complete language (loops,
 * recursion, built-ins that build huge strings, regular expressions that backtrack). A plain path is none of that:
 * it is recognised by a linear scan of the text (no regular expression that can backtrack), and evaluating it is at
 * most a few property reads per name written, over values already in memory; the answer is a value that is
 * already there (copied as plain JSON, as the worker's answer is), so it can neither hang nor take more memory than
 * the bindings hold. Anything else, including every case where JSONata's sequence semantics would matter (a path
 * through an array, which maps; through null or a scalar), is answered `undefined`: the caller sends it to the
 * sandbox as before. So every value is the one JSONata gives (test/unit/plan/plain-paths.test.ts compares them).
 */
import { type ExpressionBindings, jsonataBody, toJson } from './expression-limits.ts';

type Variable = 'objective' | 'outputs' | 'output' | 'input';
const VARIABLES: ReadonlySet<string> = new Set<Variable>(['objective', 'outputs', 'output', 'input']);
/** Words that JSONata reads as operators or literals, never as a field name, after a `.`. */
const KEYWORDS: ReadonlySet<string> = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);

export interface PlainPath {
  readonly variable: Variable;
  readonly names: readonly string[];
}

/** A plain expression: one path, or an array constructor of paths. */
export type PlainExpression =
  | { readonly kind: 'path'; readonly path: PlainPath }
  | { readonly kind: 'array'; readonly items: readonly PlainPath[] };

const isStart = (c: string): boolean => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isPart = (c: string): boolean => isStart(c) || (c >= '0' && c <= '9');

/** Reads an identifier from `at`; answers its end, or -1. */
function identifierEnd(text: string, at: number): number {
  if (!isStart(text[at] ?? '')) return -1;
  let end = at + 1;
  while (end < text.length && isPart(text[end] as string)) end += 1;
  return end;
}

/** `$name(.field)*` with fields as identifiers or backtick-quoted, no spaces; undefined for anything else. */
function parsePath(text: string): PlainPath | undefined {
  if (text[0] !== '$') return undefined;
  const end = identifierEnd(text, 1);
  if (end < 0) return undefined;
  const variable = text.slice(1, end);
  if (!VARIABLES.has(variable)) return undefined;
  const names: string[] = [];
  let at = end;
  while (at < text.length) {
    if (text[at] !== '.') return undefined;
    at += 1;
    if (text[at] === '`') {
      const close = text.indexOf('`', at + 1);
      if (close <= at + 1) return undefined;
      names.push(text.slice(at + 1, close));
      at = close + 1;
    } else {
      const nameEnd = identifierEnd(text, at);
      if (nameEnd < 0) return undefined;
      const name = text.slice(at, nameEnd);
      if (KEYWORDS.has(name)) return undefined;
      names.push(name);
      at = nameEnd;
    }
  }
  // `$objective` is a string, and the validator refuses a bare `$outputs`: neither is navigated here.
  if (variable === 'objective' && names.length > 0) return undefined;
  if (variable === 'outputs' && names.length === 0) return undefined;
  return { variable: variable as Variable, names };
}

/** The plain form of an expression (`{% … %}` or bare JSONata), or undefined when it is anything more. */
export function parsePlainExpression(source: string): PlainExpression | undefined {
  const body = jsonataBody(source);
  if (body.length > 1024) return undefined;
  if (!body.startsWith('[')) {
    const path = parsePath(body);
    return path === undefined ? undefined : { kind: 'path', path };
  }
  if (!body.endsWith(']')) return undefined;
  const inner = body.slice(1, -1).trim();
  if (inner.length === 0) return undefined;
  // A backtick-quoted name may hold a comma: then this is not for the fast path.
  if (inner.includes('`')) return undefined;
  const items: PlainPath[] = [];
  for (const part of inner.split(',')) {
    const path = parsePath(part.trim());
    if (path === undefined) return undefined;
    items.push(path);
  }
  return { kind: 'array', items };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at a path: `{ value }` (undefined when absent), or undefined where JSONata's sequences would matter. */
function lookup(path: PlainPath, bindings: ExpressionBindings): { value: unknown } | undefined {
  if (path.variable !== 'objective' && path.variable !== 'outputs' && !(path.variable in bindings)) return undefined;
  let current: unknown = bindings[path.variable];
  for (const name of path.names) {
    if (current === undefined) return { value: undefined };
    if (!isRecord(current)) return undefined;
    if (Object.hasOwn(current, name)) current = current[name];
    else if (name in current)
      return undefined; // inherited (`constructor`): JSONata may see it
    else current = undefined;
  }
  return { value: current };
}

/**
 * The value JSONata gives a plain expression over these bindings, as `{ value }` (value undefined: no value), or
 * undefined when only JSONata can say (the caller asks the sandbox).
 */
export function evaluatePlain(
  expression: PlainExpression,
  bindings: ExpressionBindings,
): { value: unknown } | undefined {
  if (expression.kind === 'path') {
    const found = lookup(expression.path, bindings);
    return found === undefined ? undefined : { value: toJson(found.value) };
  }
  const values: unknown[] = [];
  for (const item of expression.items) {
    const found = lookup(item, bindings);
    if (found === undefined) return undefined;
    // An array constructor drops what has no value and splices in a path's array one level deep.
    if (Array.isArray(found.value)) values.push(...found.value);
    else if (found.value !== undefined) values.push(found.value);
  }
  return { value: toJson(values) };
}
