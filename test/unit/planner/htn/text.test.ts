import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateExpression } from '../../../../shared/plan/expressions.ts';
import { EXPRESSION_PATTERN, STEP_ID_PATTERN } from '../../../../shared/plan/schema.ts';
import { clip, literal, outputRef, slug, trimName, uniqueKeys } from '../../../../shared/planner/htn/text.ts';

describe('literal', () => {
  it('leaves ordinary text alone', () => {
    expect(literal('Acme Corp')).toBe('Acme Corp');
  });

  it('turns text shaped like an expression into an expression that yields the text itself', async () => {
    fc.assert(
      fc.property(fc.string(), (inner) => {
        const text = `{%${inner}%}`;
        const out = literal(text);
        expect(EXPRESSION_PATTERN.test(out)).toBe(true);
        expect(out).not.toBe(text);
      }),
    );
    await expect(evaluateExpression(literal('{% $outputs.x %}'), { objective: 'o', outputs: {} })).resolves.toBe(
      '{% $outputs.x %}',
    );
  });
});

describe('outputRef', () => {
  it('quotes ids that are not plain JSONata names', async () => {
    expect(outputRef('write')).toBe('$outputs.write');
    expect(outputRef('in')).toBe('$outputs.`in`');
    const outputs = { 'research.acme-corp.extract': 1, write: 2, in: 3 };
    for (const id of Object.keys(outputs))
      await expect(evaluateExpression(outputRef(id), { objective: 'o', outputs })).resolves.toBe(
        outputs[id as keyof typeof outputs],
      );
  });
});

describe('clip', () => {
  it('bounds length, collapses whitespace and never ends in half a surrogate pair', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 80 }), fc.integer({ min: 2, max: 40 }), (text, max) => {
        const out = clip(text, max);
        expect(out.length).toBeLessThanOrEqual(max);
        expect(/[\uD800-\uDBFF]$/.test(out.replace(/…$/, ''))).toBe(false);
      }),
    );
    expect(clip('  a \n b  ', 10)).toBe('a b');
    expect(clip('abcdefghij', 5)).toBe('abcd…');
  });
});

describe('slug and uniqueKeys', () => {
  it('makes lower-case ASCII segments', () => {
    expect(slug('Acme Corp, Inc.')).toBe('acme-corp-inc');
    expect(slug('Ünïcödé')).toBe('unicode');
    expect(slug('日本')).toBe('');
  });

  it('gives distinct keys that fit in a step id for any labels', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 12 }), (labels) => {
        const keys = uniqueKeys(labels, 'subject');
        expect(new Set(keys).size).toBe(labels.length);
        for (const key of keys) {
          expect(key).toMatch(/^[a-z0-9][a-z0-9-]*$/);
          expect(STEP_ID_PATTERN.test(`research.${key}.extract`)).toBe(true);
        }
      }),
    );
    expect(uniqueKeys(['Acme', 'acme', '!!'], 'subject')).toEqual(['acme', 'acme-2', 'subject-3']);
  });
});

describe('trimName', () => {
  it('drops the punctuation a sentence leaves after a name', () => {
    expect(trimName('checkout-api.')).toBe('checkout-api');
  });
});
