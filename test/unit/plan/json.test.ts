import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, parseStrictJson } from '../../../shared/plan/json.ts';

const failure = (text: string) => {
  const result = parseStrictJson(text);
  if (result.ok) throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
  return result.issue;
};

/** Whether the text holds no whole number past 2^53-1 (JSON.stringify writes those in digits, which are refused). */
const doublesCarry = (text: string): boolean => {
  let fine = true;
  JSON.parse(text, (_key, value: unknown) => {
    if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) fine = false;
    return value;
  });
  return fine;
};

describe('parseStrictJson', () => {
  it('returns what JSON.parse returns for any JSON text without duplicate or reserved keys', () => {
    // fc.json() now and then writes a "__proto__" key, or a whole number past 2^53 in digits, which are refused (see
    // the reserved-key and number tests below).
    const accepted = fc.json().filter((text) => !text.includes('"__proto__":') && doublesCarry(text));
    fc.assert(
      fc.property(accepted, (text) => {
        const result = parseStrictJson(text);
        expect(result).toEqual({ ok: true, value: JSON.parse(text) });
      }),
    );
  });

  it('accepts pretty-printed text and escaped keys that differ', () => {
    const result = parseStrictJson('{\n  "a\\u0062": 1,\n  "abc": [ {"x": "y\\"z"} ]\n}\n');
    expect(result).toEqual({ ok: true, value: { ab: 1, abc: [{ x: 'y"z' }] } });
  });

  it('rejects a duplicate key at the top level with the path of the duplicate', () => {
    expect(failure('{"a": 1, "a": 2}')).toEqual({
      code: 'E_JSON',
      path: '/a',
      message: 'duplicate key "a" at line 1, column 10',
    });
  });

  it('rejects a duplicate key deep inside arrays and objects', () => {
    const issue = failure('{"steps": [{"id": "x"}, {"id": "y", "input": {"q": 1,\n "q": 2}}]}');
    expect(issue.path).toBe('/steps/1/input/q');
    expect(issue.message).toContain('line 2, column 2');
  });

  it('treats keys that are equal once unescaped as duplicates', () => {
    expect(failure('{"ab": 1, "a\\u0062": 2}').path).toBe('/ab');
  });

  it('escapes pointer tokens in the path of a duplicate', () => {
    expect(failure('{"a/b": {"c~d": 1, "c~d": 2}}').path).toBe('/a~1b/c~0d');
  });

  it('does not mistake equal keys in sibling objects for duplicates', () => {
    expect(parseStrictJson('[{"a": 1}, {"a": 2}, {"b": {"a": 3}}]').ok).toBe(true);
  });

  it('finds a duplicate among many keys', () => {
    const keys = Array.from({ length: 100 }, (_, i) => `"k${i}": ${i}`);
    expect(failure(`{${keys.join(',')}, "k7": 0}`).path).toBe('/k7');
  });

  it('rejects a "__proto__" key at any depth with E_RESERVED_KEY and its path', () => {
    expect(failure('{"__proto__": {"polluted": true}}')).toEqual({
      code: 'E_RESERVED_KEY',
      path: '/__proto__',
      message: 'reserved key "__proto__" at line 1, column 2',
    });
    expect(failure('{"a": [1, {"b": {"__proto__": null}}]}')).toMatchObject({
      code: 'E_RESERVED_KEY',
      path: '/a/1/b/__proto__',
    });
    // Written with escapes it is the same key once unescaped.
    expect(failure('{"\\u005f_proto__": {}}')).toMatchObject({ code: 'E_RESERVED_KEY' });
  });

  it('keeps "__proto__" as a string value and "constructor" and "prototype" as ordinary own keys', () => {
    const result = parseStrictJson(
      '{"constructor": {"prototype": {"x": 1}}, "name": "__proto__", "list": ["__proto__"]}',
    );
    expect(result.ok).toBe(true);
    const value = (result as { value: Record<string, unknown> }).value;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(['constructor', 'name', 'list']);
    expect(value.constructor).toEqual({ prototype: { x: 1 } });
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('rejects data after the value', () => {
    const issue = failure('{"a": 1}\n{"b": 2}');
    expect(issue.message).toBe("unexpected data after the JSON value: '{' at line 2, column 1");
    expect(issue.path).toBe('');
  });

  it('accepts trailing whitespace', () => {
    expect(parseStrictJson('[1] \n\t').ok).toBe(true);
  });

  it.each([
    ['', 'unexpected end of input'],
    ['{"a": 1,}', "trailing comma before '}'"],
    ['[1, 2,]', "trailing comma before ']'"],
    ['{"a" 1}', "expected ':'"],
    ["{'a': 1}", 'expected a double-quoted property name'],
    ['[01]', 'leading zeros'],
    ['"\\x"', "invalid escape '\\x'"],
    ['"a\nb"', 'unescaped control character U+000A'],
    ['"abc', 'unterminated string'],
    ['tru', "invalid literal, expected 'true'"],
    ['[1 2]', "expected ',' or ']'"],
    ['NaN', 'expected a value'],
    ['\uFEFF{}', 'U+FEFF'],
  ])('rejects malformed JSON %j with a clear message', (text, expected) => {
    const issue = failure(text);
    expect(issue.code).toBe('E_JSON');
    expect(issue.message).toContain(expected);
    expect(issue.message).toMatch(/at line \d+, column \d+$/);
  });

  it('reports the line and column of the problem', () => {
    expect(failure('{\n  "a": 1,\n  "b": ]\n}').message).toBe("unexpected ']', expected a value at line 3, column 8");
  });

  it('rejects nesting deeper than the limit without overflowing the stack', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(failure(deep).message).toContain(`nesting deeper than ${MAX_JSON_DEPTH} levels`);
    const unterminated = '{"a":'.repeat(50_000);
    expect(failure(unterminated).code).toBe('E_JSON');
  });

  it('accepts nesting up to the limit', () => {
    const text = `${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    expect(parseStrictJson(text).ok).toBe(true);
  });

  it('never throws on arbitrary text, and agrees with JSON.parse on what is well-formed', () => {
    const jsonish = fc.constantFrom(...'{}[]":,01-.eE+ \n\tabtrufalsn\\u/'.split(''), '\u0001', 'true', 'null');
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: jsonish, maxLength: 60 })), (text) => {
        const result = parseStrictJson(text);
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        if (!parses) expect(result).toMatchObject({ ok: false, issue: { code: 'E_JSON' } });
        if (result.ok) expect(parses).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on JSON text cut or spliced at random places', () => {
    fc.assert(
      fc.property(fc.json(), fc.nat(), fc.nat(), (text, a, b) => {
        const cut = text.slice(0, a % (text.length + 1)) + text.slice(b % (text.length + 1));
        const result = parseStrictJson(cut);
        expect(result.ok).toBe(
          (() => {
            try {
              JSON.parse(cut);
              return result.ok;
            } catch {
              return false;
            }
          })(),
        );
      }),
    );
  });

  it('handles a one-megabyte string', () => {
    const big = JSON.stringify({ text: 'x'.repeat(1_000_000) });
    expect(parseStrictJson(big).ok).toBe(true);
    expect(failure(`${big.slice(0, -1)}, "text": 1}`).path).toBe('/text');
  });

  it('rejects a value that is not text', () => {
    expect(failure(42 as unknown as string).code).toBe('E_JSON');
  });
});

describe('parseStrictJson: numbers a double cannot carry', () => {
  it.each([
    ['an integer past 2^53-1', '9007199254740992', 'the integer 9007199254740992 is beyond ±(2^53-1)'],
    ['a negative integer past -(2^53-1)', '-9007199254740992', 'the integer -9007199254740992 is beyond'],
    ['a twenty-digit integer', '12345678901234567890', 'the integer 12345678901234567890 is beyond'],
    ['an overflow to Infinity', '1e400', 'the number 1e400 is too large for a double (it would be Infinity)'],
    ['a negative overflow', '-1.5E+309', 'the number -1.5E+309 is too large for a double'],
    ['an underflow to 0', '1e-400', 'the number 1e-400 is too small for a double (it would be 0)'],
    ['an underflow written in decimals', `-0.${'0'.repeat(400)}1`, 'is too small for a double (it would be 0)'],
  ])('refuses %s with E_JSON and the pointer to the value', (_, literal, message) => {
    const issue = failure(`{"steps": [{"id": "a", "input": {"n": ${literal}}}]}`);
    expect(issue).toMatchObject({ code: 'E_JSON', path: '/steps/0/input/n' });
    expect(issue.message).toContain(message);
    expect(issue.message).toContain('at line 1, column 39');
  });

  it('points into arrays and at a bare value', () => {
    expect(failure('{"a": [1, 2, 99999999999999999999]}').path).toBe('/a/2');
    expect(failure('1e999')).toMatchObject({ code: 'E_JSON', path: '' });
  });

  it('shortens a long literal in the message', () => {
    const issue = failure(`[${'9'.repeat(5000)}]`);
    expect(issue.message).toContain('… (5000 characters)');
    expect(issue.message.length).toBeLessThan(200);
  });

  it('refuses only the number a double cannot carry, among zeros of any form, subnormals and decimals it rounds', () => {
    const carried = [
      '9007199254740991',
      '-9007199254740991',
      '0',
      '-0',
      '0.0',
      '0e-999',
      '1e21',
      '0.1',
      '5e-324',
      '1.7976931348623157e308',
      '3.14159265358979323846',
    ];
    const text = `[${carried.join(', ')}]`;
    expect(parseStrictJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
    expect(failure(`[${carried.join(', ')}, 1e-999]`).path).toBe(`/${carried.length}`);
  });
});
