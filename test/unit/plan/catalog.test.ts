import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCatalogError } from '../../../shared/errors.ts';
import { contractsEqual, JSON_SCHEMA_2020_12, loadCatalog, parseCatalog } from '../../../shared/plan/catalog.ts';
import type { Capability } from '../../../shared/plan/schema.ts';
import { catalog, catalogText } from './plan-testkit.ts';

const contract = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
const cap = (target: string, overrides: Partial<Capability> = {}): Capability => ({
  target,
  description: target,
  sideEffect: 'none',
  inputSchema: structuredClone(contract),
  outputSchema: { type: 'object' },
  ...overrides,
});

/** The reasons a catalog document is refused. */
function reasons(doc: unknown): string[] {
  try {
    loadCatalog(doc);
  } catch (error) {
    if (!isCatalogError(error)) throw error;
    return error.context.reasons as string[];
  }
  throw new Error('expected the catalog to be refused');
}

describe('loadCatalog', () => {
  it('loads the fixture catalog with its targets in order', () => {
    expect(catalog.targets()).toEqual([
      'tool:search',
      'tool:search-backup',
      'tool:fetch',
      'agent:writer',
      'human:review',
      'tool:deploy',
    ]);
    expect(catalog.has('tool:fetch')).toBe(true);
    expect(catalog.has('tool:nope')).toBe(false);
    expect(catalog.get('tool:deploy')?.sideEffect).toBe('mutating');
    expect(catalog.get('tool:nope')).toBeUndefined();
    expect(catalog.capabilities()).toHaveLength(6);
  });

  it('refuses a document of the wrong shape, naming the field', () => {
    expect(reasons({ capabilities: [{ target: 'tool:x' }] }).join('\n')).toMatch(/\/capabilities\/0\/description/);
    expect(reasons({ capabilities: [cap('tool:x', { extra: 1 } as Partial<Capability>)] }).join()).toMatch(/extra/);
    expect(reasons(null)).not.toHaveLength(0);
    expect(reasons([])).not.toHaveLength(0);
    expect(reasons({ capabilities: [cap('bad target')] }).join()).toMatch(/target/);
  });

  it('refuses a duplicate target', () => {
    expect(reasons({ capabilities: [cap('tool:x'), cap('tool:x')] })).toEqual([
      '/capabilities/1: duplicate target tool:x',
    ]);
  });

  it('refuses an alternative that is not in the catalog', () => {
    expect(reasons({ capabilities: [cap('tool:x', { alternatives: ['tool:y'] })] })).toEqual([
      '/capabilities/0/alternatives: unknown target tool:y',
    ]);
  });

  it('refuses an alternative whose contracts differ', () => {
    const other = cap('tool:y', { outputSchema: { type: 'string' } });
    expect(reasons({ capabilities: [cap('tool:x', { alternatives: ['tool:y'] }), other] })).toEqual([
      '/capabilities/0/alternatives: tool:y does not have the contracts of tool:x',
    ]);
  });

  it('accepts alternatives whose contracts list keys in another order', () => {
    const reordered = { required: ['q'], properties: { q: { type: 'string' } }, type: 'object' };
    const doc = {
      capabilities: [cap('tool:x', { alternatives: ['tool:y'] }), cap('tool:y', { inputSchema: reordered })],
    };
    expect(loadCatalog(doc).get('tool:x')?.alternatives).toEqual(['tool:y']);
  });

  it('refuses a contract that is not valid JSON Schema 2020-12', () => {
    const [reason] = reasons({ capabilities: [cap('tool:x', { inputSchema: { type: 'objekt' } })] });
    expect(reason).toMatch(/^\/capabilities\/0\/inputSchema: not a valid JSON Schema 2020-12/);
    expect(reasons({ capabilities: [cap('tool:x', { outputSchema: { minLength: -1 } })] })).toHaveLength(1);
  });

  it('refuses a pattern that is not a regular expression', () => {
    expect(reasons({ capabilities: [cap('tool:x', { inputSchema: { pattern: '([a-z' } })] }).join()).toMatch(
      /pattern "\(\[a-z" is not a valid regular expression/,
    );
  });

  it('refuses a remote $ref anywhere in a contract', () => {
    const remote = { type: 'object', properties: { a: { $ref: 'https://example.com/schema.json' } } };
    expect(reasons({ capabilities: [cap('tool:x', { inputSchema: remote })] })).toEqual([
      '/capabilities/0/inputSchema/properties/a: remote $ref "https://example.com/schema.json" is not allowed',
    ]);
    const relative = { allOf: [{ $ref: 'other.json#/x' }] };
    expect(reasons({ capabilities: [cap('tool:x', { outputSchema: relative })] }).join()).toMatch(/remote \$ref/);
  });

  it('refuses a local $ref that does not resolve', () => {
    const dangling = { type: 'array', items: { $ref: '#/$defs/missing' } };
    expect(reasons({ capabilities: [cap('tool:x', { inputSchema: dangling })] }).join()).toMatch(/does not resolve/);
  });

  it('accepts local refs, anchors and a property that is merely named $ref', () => {
    const local = {
      $schema: JSON_SCHEMA_2020_12,
      type: 'object',
      properties: { $ref: { type: 'string' }, a: { $ref: '#/$defs/a' }, b: { $ref: '#thing' }, c: { $ref: '#' } },
      $defs: { a: { type: 'string' }, t: { $anchor: 'thing', type: 'number' } },
      examples: [{ $ref: 'https://example.com/not-a-keyword-here' }],
    };
    const loaded = loadCatalog({ capabilities: [cap('tool:x', { inputSchema: local })] });
    expect(loaded.validateInput('tool:x', { a: 'x', b: 1, $ref: 'y' })).toEqual({ ok: true });
    expect(loaded.validateInput('tool:x', { a: 1 }).ok).toBe(false);
  });

  it('refuses another $schema dialect, also in a subschema', () => {
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' };
    expect(reasons({ capabilities: [cap('tool:x', { inputSchema: draft7 })] }).join()).toMatch(
      /\$schema must be https:\/\/json-schema.org\/draft\/2020-12\/schema/,
    );
    const nested = { type: 'object', properties: { a: { $schema: 'https://json-schema.org/draft/2019-09/schema' } } };
    expect(reasons({ capabilities: [cap('tool:x', { inputSchema: nested })] })).toHaveLength(1);
  });

  it('reports every reason at once', () => {
    const doc = {
      capabilities: [cap('tool:x', { alternatives: ['tool:nope'], inputSchema: { $ref: 'http://x' } }), cap('tool:x')],
    };
    expect(reasons(doc)).toHaveLength(3);
  });

  it('throws a CatalogError whose message lists the reasons', () => {
    expect(() => loadCatalog({ capabilities: [cap('tool:x'), cap('tool:x')] })).toThrow(/duplicate target tool:x/);
  });
});

describe('parseCatalog', () => {
  it('parses catalog JSON', () => {
    expect(parseCatalog(catalogText).targets()).toEqual(catalog.targets());
  });

  it('refuses malformed JSON and duplicate keys as CatalogError', () => {
    for (const text of ['{"capabilities": [', '{"capabilities": [], "capabilities": []}', '{} x']) {
      let caught: unknown;
      try {
        parseCatalog(text);
      } catch (error) {
        caught = error;
      }
      expect(isCatalogError(caught)).toBe(true);
      expect((caught as Error).message).toMatch(/^invalid catalog JSON: /);
    }
  });
});

describe('Catalog.validateInput / validateOutput', () => {
  it('checks a value against the target contract', () => {
    expect(catalog.validateInput('tool:search', { query: 'x' })).toEqual({ ok: true });
    const bad = catalog.validateInput('tool:search', { query: 1, extra: true });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.errors.join('\n')).toMatch(/\/query must be string/);
    expect(catalog.validateOutput('tool:search', { hits: [{ title: 't', url: 'u' }] })).toEqual({ ok: true });
    expect(catalog.validateOutput('tool:search', { hits: [{ title: 't' }] }).ok).toBe(false);
  });

  it('answers an unknown target with an error, not an exception', () => {
    expect(catalog.validateInput('tool:nope', {})).toEqual({ ok: false, errors: ['unknown target "tool:nope"'] });
  });

  it('compiles a contract once and reuses it', () => {
    const loaded = loadCatalog({ capabilities: [cap('tool:x'), cap('tool:y')] });
    for (let i = 0; i < 3; i += 1) expect(loaded.validateInput('tool:x', { q: 'a' }).ok).toBe(true);
    expect(loaded.validateInput('tool:y', {}).ok).toBe(false);
  });

  it('ignores formats, which are annotations in 2020-12', () => {
    const loaded = loadCatalog({ capabilities: [cap('tool:x', { inputSchema: { type: 'string', format: 'uri' } })] });
    expect(loaded.validateInput('tool:x', 'not a uri').ok).toBe(true);
  });
});

describe('contractsEqual', () => {
  it('ignores object key order', () => {
    expect(contractsEqual({ a: 1, b: { c: [1, 2], d: null } }, { b: { d: null, c: [1, 2] }, a: 1 })).toBe(true);
  });

  it('respects array order, types, missing and extra keys', () => {
    expect(contractsEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(contractsEqual({ a: 1 }, { a: '1' })).toBe(false);
    expect(contractsEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(contractsEqual({ a: 1, b: 2 }, { a: 1, c: 2 })).toBe(false);
    expect(contractsEqual([], {})).toBe(false);
    expect(contractsEqual(null, {})).toBe(false);
    expect(contractsEqual({ __proto__: null, a: 1 }, { a: 1 })).toBe(true);
  });

  it('does not match an own key against an inherited one', () => {
    expect(contractsEqual(JSON.parse('{"__proto__": {}}'), { x: {} })).toBe(false);
    expect(contractsEqual(JSON.parse('{"toString": 1}'), { x: 1 })).toBe(false);
  });

  it('agrees with equality of sorted-key serialisations on arbitrary JSON', () => {
    const canonical = (v: unknown): string =>
      JSON.stringify(v, (_, x: unknown) =>
        typeof x === 'object' && x !== null && !Array.isArray(x)
          ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
          : x,
      );
    const value = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(contractsEqual(a, b)).toBe(canonical(a) === canonical(b));
        expect(contractsEqual(a, structuredClone(a))).toBe(true);
      }),
    );
  });
});
