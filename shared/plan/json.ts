/**
 * Strict JSON: RFC 8259 text with one value, no trailing data, no duplicate key and no `__proto__` key at any depth,
 * and no number a double cannot carry (json-numbers.ts: an integer beyond ±(2^53−1), an overflow, an underflow).
 *
 * `JSON.parse` silently keeps the last of two equal keys, so a plan could say one thing to a reviewer and another to
 * the executor. It also makes `__proto__` an own property, which every later copy (zod, spreads, `Object.assign`)
 * either drops or turns into the copy's prototype: the key is refused (E_RESERVED_KEY) so that it can do neither.
 * `constructor` and `prototype` stay ordinary keys: as own data properties they set nothing.
 *
 * The fast path is the native parser plus a single scan of the keys and numbers (the scan may assume the text is
 * well-formed).
 * Only when either rejects the text does the slower checking parser below run, to say where and why with a line, a
 * column and a JSON Pointer.
 */
import { type IssueCode, issue, type PlanIssue, pointer } from './issues.ts';
import { numberLiteralEnd, numberProblem } from './json-numbers.ts';

/** The one key refused anywhere in a document: assigning it to a plain object sets the object's prototype. */
export const RESERVED_KEY = '__proto__';

/** Deeper nesting than this is rejected: no plan needs it, and recursive consumers would overflow the stack. */
export const MAX_JSON_DEPTH = 256;

export type StrictJsonResult = { ok: true; value: unknown } | { ok: false; issue: PlanIssue };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const isWhitespace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number): boolean => c >= ZERO && c <= NINE;

export function parseStrictJson(text: string): StrictJsonResult {
  if (typeof text !== 'string') return { ok: false, issue: issue('E_JSON', '', 'expected JSON text (a string)') };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, issue: explainFailure(text) };
  }
  if (scanKeysAndDepth(text) === 'fine') return { ok: true, value };
  return { ok: false, issue: explainFailure(text) };
}

/** Index of the quote that closes the string opened at `open`, for text already known to be well-formed. */
function closingQuote(text: string, open: number): number {
  let end = text.indexOf('"', open + 1);
  for (;;) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

// Objects are small in practice: a linear scan beats a Set until a few dozen keys.
const SMALL_OBJECT = 24;
type KeySet = string[] | Set<string>;

/**
 * Duplicate-key, reserved-key, number and depth scan over text that `JSON.parse` accepted. Iterative, so any nesting is safe here; the
 * depth limit protects everything after it (schema checks, encoders) from recursing off the stack.
 */
function scanKeysAndDepth(text: string): 'fine' | 'problem' {
  const stack: (KeySet | null)[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = closingQuote(text, i);
      let next = end + 1;
      while (isWhitespace(text.charCodeAt(next))) next += 1;
      if (text.charCodeAt(next) === COLON) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (key === RESERVED_KEY) return 'problem';
        const keys = stack[stack.length - 1];
        if (Array.isArray(keys)) {
          if (keys.includes(key)) return 'problem';
          keys.push(key);
          if (keys.length > SMALL_OBJECT) stack[stack.length - 1] = new Set(keys);
        } else if (keys) {
          if (keys.has(key)) return 'problem';
          keys.add(key);
        }
        i = next + 1;
      } else {
        i = next;
      }
      continue;
    }
    if (c === MINUS || isDigit(c)) {
      // Outside strings a digit or a minus can only start a number (literals are true, false and null).
      const { end, suspect } = numberLiteralEnd(text, i);
      if (suspect && numberProblem(text.slice(i, end)) !== undefined) return 'problem';
      i = end;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (stack.length >= MAX_JSON_DEPTH) return 'problem';
      stack.push(c === OPEN_BRACE ? [] : null);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) stack.pop();
    i += 1;
  }
  return 'fine';
}

type Frame = { kind: 'object'; keys: Set<string>; key: string | null } | { kind: 'array'; index: number };

class JsonSyntaxError extends Error {
  constructor(
    readonly at: number,
    readonly what: string,
    readonly code: IssueCode = 'E_JSON',
  ) {
    super(what);
  }
}

function lineAndColumn(text: string, at: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let nl = text.indexOf('\n'); nl !== -1 && nl < at; nl = text.indexOf('\n', nl + 1)) {
    line += 1;
    lineStart = nl + 1;
  }
  return { line, column: at - lineStart + 1 };
}

const describeChar = (text: string, at: number): string => {
  if (at >= text.length) return 'end of input';
  const ch = text.charAt(at);
  const code = text.charCodeAt(at);
  return code < 0x20 || code === 0xfeff ? `character U+${code.toString(16).toUpperCase().padStart(4, '0')}` : `'${ch}'`;
};

/**
 * The checking parser: walks the text once with an explicit stack and throws at the first problem. It builds no
 * values, only the key sets needed to find duplicates. Returns the issue, or a generic one if the text is fine
 * (which would mean the fast path disagreed with it; the generic issue keeps the result safe).
 */
function explainFailure(text: string): PlanIssue {
  const frames: Frame[] = [];
  try {
    parseChecked(text, frames);
    return issue('E_JSON', '', 'the document is not strict JSON');
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    const { line, column } = lineAndColumn(text, error.at);
    // The path names the member being read when the parser stopped (for a duplicate key: the duplicate itself).
    const segments: (string | number)[] = [];
    for (const frame of frames) {
      if (frame.kind === 'array') segments.push(frame.index);
      else if (frame.key !== null) segments.push(frame.key);
    }
    return issue(error.code, pointer(segments), `${error.what} at line ${line}, column ${column}`);
  }
}

function parseChecked(text: string, frames: Frame[]): void {
  const n = text.length;
  let i = 0;
  const skipWhitespace = (): void => {
    while (i < n && isWhitespace(text.charCodeAt(i))) i += 1;
  };
  const fail = (what: string, at = i): never => {
    throw new JsonSyntaxError(at, what);
  };
  const readString = (): string => {
    const open = i;
    i += 1;
    let escaped = false;
    for (;;) {
      if (i >= n) fail('unterminated string', open);
      const c = text.charCodeAt(i);
      if (c === QUOTE) break;
      if (c < 0x20) fail(`unescaped control character U+${c.toString(16).toUpperCase().padStart(4, '0')} in a string`);
      if (c === BACKSLASH) {
        escaped = true;
        const e = text.charAt(i + 1);
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('invalid \\u escape in a string');
          i += 6;
          continue;
        }
        if (!'"\\/bfnrt'.includes(e) || e === '') fail(`invalid escape '\\${e}' in a string`);
        i += 2;
        continue;
      }
      i += 1;
    }
    i += 1;
    const raw = text.slice(open + 1, i - 1);
    return escaped ? (JSON.parse(text.slice(open, i)) as string) : raw;
  };
  const readDigits = (what: string): void => {
    if (!isDigit(text.charCodeAt(i))) fail(`expected a digit in ${what}, got ${describeChar(text, i)}`);
    while (isDigit(text.charCodeAt(i))) i += 1;
  };
  const readNumber = (): void => {
    const start = i;
    readNumberSyntax();
    const problem = numberProblem(text.slice(start, i));
    if (problem !== undefined) fail(problem, start);
  };
  const readNumberSyntax = (): void => {
    if (text.charCodeAt(i) === MINUS) i += 1;
    if (text.charCodeAt(i) === ZERO) {
      i += 1;
      if (isDigit(text.charCodeAt(i))) fail('a number must not have leading zeros');
    } else readDigits('a number');
    if (text.charCodeAt(i) === DOT) {
      i += 1;
      readDigits('the fraction of a number');
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i += 1;
      const sign = text.charCodeAt(i);
      if (sign === PLUS || sign === MINUS) i += 1;
      readDigits('the exponent of a number');
    }
  };
  const readLiteral = (word: string): void => {
    if (text.startsWith(word, i)) i += word.length;
    else fail(`invalid literal, expected '${word}'`);
  };

  let expectValue = true;
  for (;;) {
    if (expectValue) {
      skipWhitespace();
      if (i >= n) fail('unexpected end of input, expected a value');
      const c = text.charCodeAt(i);
      if (c === OPEN_BRACE) {
        i += 1;
        skipWhitespace();
        if (text.charCodeAt(i) === CLOSE_BRACE) i += 1;
        else {
          if (frames.length >= MAX_JSON_DEPTH) fail(`nesting deeper than ${MAX_JSON_DEPTH} levels`, i - 1);
          frames.push({ kind: 'object', keys: new Set(), key: null });
          readKey();
          continue;
        }
      } else if (c === OPEN_BRACKET) {
        i += 1;
        skipWhitespace();
        if (text.charCodeAt(i) === CLOSE_BRACKET) i += 1;
        else {
          if (frames.length >= MAX_JSON_DEPTH) fail(`nesting deeper than ${MAX_JSON_DEPTH} levels`, i - 1);
          frames.push({ kind: 'array', index: 0 });
          continue;
        }
      } else if (c === QUOTE) readString();
      else if (c === MINUS || isDigit(c)) readNumber();
      else if (c === 0x74) readLiteral('true');
      else if (c === 0x66) readLiteral('false');
      else if (c === 0x6e) readLiteral('null');
      else if (c === CLOSE_BRACKET && frames[frames.length - 1]?.kind === 'array') fail("trailing comma before ']'");
      else fail(`unexpected ${describeChar(text, i)}, expected a value`);
      expectValue = false;
    }
    skipWhitespace();
    const top = frames[frames.length - 1];
    if (!top) {
      if (i < n) fail(`unexpected data after the JSON value: ${describeChar(text, i)}`);
      return;
    }
    const c = text.charCodeAt(i);
    if (c === COMMA) {
      i += 1;
      if (top.kind === 'array') top.index += 1;
      else readKey();
      expectValue = true;
      continue;
    }
    const close = top.kind === 'object' ? CLOSE_BRACE : CLOSE_BRACKET;
    if (c !== close)
      fail(`unexpected ${describeChar(text, i)}, expected ',' or '${top.kind === 'object' ? '}' : ']'}'`);
    i += 1;
    frames.pop();
  }

  function readKey(): void {
    skipWhitespace();
    const frame = frames[frames.length - 1];
    if (frame?.kind !== 'object') return;
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) fail("trailing comma before '}'");
    if (c !== QUOTE) fail(`unexpected ${describeChar(text, i)}, expected a double-quoted property name`);
    const at = i;
    const key = readString();
    frame.key = key;
    if (key === RESERVED_KEY) throw new JsonSyntaxError(at, `reserved key "${RESERVED_KEY}"`, 'E_RESERVED_KEY');
    if (frame.keys.has(key)) fail(`duplicate key ${JSON.stringify(key)}`, at);
    frame.keys.add(key);
    skipWhitespace();
    if (text.charCodeAt(i) !== COLON) fail(`unexpected ${describeChar(text, i)}, expected ':'`);
    i += 1;
    expectValue = true;
  }
}
