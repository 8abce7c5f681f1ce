import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Catalog, loadCatalog } from '../../../shared/plan/catalog.ts';
import { contractValidator, createContractValidators, newAjv } from '../../../shared/plan/contracts.ts';
import type { Capability } from '../../../shared/plan/schema.ts';

let unique = 0;
/** A contract no other test compiled (the process cache is shared), so compiles can be counted. */
function freshContract(): Capability['inputSchema'] {
  unique += 1;
  return {
    title: `contract ${unique} ${Date.now()}`,
    type: 'object',
    properties: { q: { type: 'string', minLength: 1 }, n: { type: 'integer', minimum: 0 } },
    required: ['q'],
    additionalProperties: false,
  };
}

const capability = (target: string, inputSchema: Capability['inputSchema']): Capability => ({
  target,
  description: target,
  sideEffect: 'none',
  inputSchema,
  outputSchema: { type: 'object' },
});

const compileSpy = () => vi.spyOn(Ajv2020.prototype, 'compile');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('contract validators', () => {
  it('compiles a schema once, however many equal copies ask for it', () => {
    const cache = createContractValidators();
    const spy = compileSpy();
    const schema = freshContract();
    const first = cache.get(schema);
    for (let i = 0; i < 200; i += 1) expect(cache.get(structuredClone(schema))).toBe(first);
    expect(cache.compiles).toBe(1);
    expect(cache.size).toBe(1);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('gives different schemas different validators, each with its own verdict', () => {
    const cache = createContractValidators();
    const strings = cache.get({ type: 'string' });
    const numbers = cache.get({ type: 'number' });
    expect(strings).not.toBe(numbers);
    expect([strings('x'), strings(1), numbers('x'), numbers(1)]).toEqual([true, false, false, true]);
    expect(cache.compiles).toBe(2);
  });

  it('reports the errors a fresh ajv with the same options reports', () => {
    const schema = freshContract();
    const value = { q: '', n: -1, extra: true };
    const cached = contractValidator(schema);
    const reference = newAjv().compile(structuredClone(schema));
    expect(cached(value)).toBe(false);
    expect(reference(value)).toBe(false);
    expect(cached.errors).toEqual(reference.errors);
    expect(cached.errors?.length).toBe(3);
  });

  it("throws ajv's error for a schema it cannot compile, caches nothing, and compiles on", () => {
    const cache = createContractValidators();
    const broken = { type: 'object', properties: { a: { type: 'no-such-type' } } };
    let expected: unknown;
    try {
      newAjv().compile(broken);
    } catch (error) {
      expected = (error as Error).message;
    }
    expect(expected).toMatch(/schema is invalid/);
    expect(() => cache.get(broken)).toThrow(expected as string);
    expect(() => cache.get(broken)).toThrow(expected as string);
    expect(cache.compiles).toBe(2);
    expect(cache.size).toBe(0);
    expect(cache.get({ type: 'boolean' })(true)).toBe(true);
  });

  it('keeps at most maxEntries validators, dropping the least recently used', () => {
    const cache = createContractValidators({ maxEntries: 2 });
    const [a, b, c] = [freshContract(), freshContract(), freshContract()];
    const va = cache.get(a);
    cache.get(b);
    expect(cache.get(a)).toBe(va); // a is now the most recently used
    cache.get(c); // evicts b
    expect(cache.size).toBe(2);
    expect(cache.compiles).toBe(3);
    expect(cache.get(a)).toBe(va);
    expect(cache.compiles).toBe(3);
    cache.get(b);
    expect(cache.compiles).toBe(4);
    expect(cache.size).toBe(2);
  });

  it('keeps no $id of one contract around for the next: equal ids in different contracts stay apart', () => {
    const cache = createContractValidators();
    const id = 'https://contracts.test/shared-id';
    const first = cache.get({ $id: id, type: 'object', properties: { a: { $id: `${id}/a`, type: 'string' } } });
    const second = cache.get({ $id: id, type: 'object', properties: { a: { $id: `${id}/a`, type: 'number' } } });
    expect([first({ a: 'x' }), first({ a: 1 }), second({ a: 'x' }), second({ a: 1 })]).toEqual([
      true,
      false,
      false,
      true,
    ]);
  });
});

describe('Catalog contracts through the process cache', () => {
  it('compiles an equal contract once across targets, catalogs and 200 checks', () => {
    const contract = freshContract();
    const doc = {
      capabilities: [capability('tool:a', contract), capability('tool:b', structuredClone(contract))],
    };
    const spy = compileSpy();
    const catalogs = [loadCatalog(structuredClone(doc)), loadCatalog(structuredClone(doc))];
    for (let i = 0; i < 200; i += 1) {
      const catalog = catalogs[i % 2] as Catalog;
      expect(catalog.validateInput(i % 3 === 0 ? 'tool:a' : 'tool:b', { q: `step ${i}` })).toEqual({ ok: true });
    }
    const inputCompiles = spy.mock.calls.filter(([schema]) => JSON.stringify(schema) === JSON.stringify(contract));
    expect(inputCompiles).toHaveLength(1);
  });

  it('reports contract violations, naming an extra field, and uncompilable contracts', () => {
    const contract = freshContract();
    const catalog = loadCatalog({ capabilities: [capability('tool:a', contract)] });
    expect(catalog.validateInput('tool:a', { q: 1, extra: true })).toEqual({
      ok: false,
      errors: ["(root) must NOT have additional properties: 'extra'", '/q must be string'],
    });
    const broken = new Catalog([capability('tool:broken', { type: 'object', properties: { a: { type: 'nope' } } })]);
    expect(broken.validateInput('tool:broken', {})).toEqual({
      ok: false,
      errors: [
        'the inputSchema of tool:broken cannot be compiled: schema is invalid: data/properties/a/type must be equal to ' +
          'one of the allowed values, data/properties/a/type must be array, data/properties/a/type must match a schema in anyOf',
      ],
    });
  });
});
