import { describe, expect, it } from 'vitest';
import {
  contractOf,
  mergeCatalog,
  sideEffectOf,
  type ToolHints,
  targetFor,
} from '../../../../shared/adapters/mcp/catalog-entries.ts';
import { loadCatalog } from '../../../../shared/plan/catalog.ts';
import type { Capability } from '../../../../shared/plan/schema.ts';

describe('sideEffectOf', () => {
  it.each<[string, ToolHints | undefined, string | undefined]>([
    ['no annotations', undefined, undefined],
    ['only a title', { title: 'Lookup' }, undefined],
    ['only idempotentHint (meaningless without a write)', { idempotentHint: true }, undefined],
    ['readOnlyHint true', { readOnlyHint: true }, 'none'],
    ['readOnlyHint true over a contradicting destructiveHint', { readOnlyHint: true, destructiveHint: true }, 'none'],
    ['readOnlyHint false (destructive by default)', { readOnlyHint: false }, 'mutating'],
    ['destructiveHint true', { destructiveHint: true }, 'mutating'],
    ['additive, not idempotent', { readOnlyHint: false, destructiveHint: false }, 'mutating'],
    ['destructive even if idempotent', { destructiveHint: true, idempotentHint: true }, 'mutating'],
    ['neither destructive nor unsafe to repeat', { destructiveHint: false, idempotentHint: true }, 'idempotent'],
  ])('reads %s', (_label, hints, expected) => {
    expect(sideEffectOf(hints)?.sideEffect).toBe(expected);
  });
});

describe('contractOf', () => {
  it('turns a draft-07 schema into one the catalog loads as 2020-12', () => {
    const draft7 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: {
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false },
        list: { type: 'array', items: { $ref: '#/definitions/item' } },
      },
      definitions: { item: { type: 'string' } },
    };

    const contract = contractOf(draft7);

    expect(contract).toEqual({
      type: 'object',
      properties: {
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
        list: { type: 'array', items: { $ref: '#/definitions/item' } },
      },
      definitions: { item: { type: 'string' } },
    });
    const capability: Capability = {
      target: 'tool:x.y',
      description: 'd',
      inputSchema: contract,
      outputSchema: {},
      sideEffect: 'none',
    };
    expect(
      loadCatalog({ capabilities: [capability] }).validateInput('tool:x.y', { pair: ['a', 1], list: ['b'] }),
    ).toEqual({
      ok: true,
    });
  });

  it('keeps a 2020-12 $schema', () => {
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' };

    expect(contractOf(schema)).toEqual(schema);
  });
});

describe('targetFor', () => {
  it('makes a valid target of any server and tool name', () => {
    expect(targetFor('My Server', 'send mail!')).toBe('tool:My-Server.send-mail-');
    expect(targetFor('@scope/pkg', '_private')).toBe('tool:scope/pkg.private');
    expect(targetFor('', '')).toBe('tool:mcp.mcp');
  });
});

describe('mergeCatalog', () => {
  const entry = (target: string, description: string): Capability => ({
    target,
    description,
    inputSchema: {},
    outputSchema: {},
    sideEffect: 'none',
  });

  it('replaces entries in place and appends new ones', () => {
    const merged = mergeCatalog({ capabilities: [entry('tool:a', 'old a'), entry('tool:b', 'b')] }, [
      entry('tool:c', 'c'),
      entry('tool:a', 'new a'),
    ]);

    expect(merged.capabilities.map((c) => [c.target, c.description])).toEqual([
      ['tool:a', 'new a'],
      ['tool:b', 'b'],
      ['tool:c', 'c'],
    ]);
  });
});
