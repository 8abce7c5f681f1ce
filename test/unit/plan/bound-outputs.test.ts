import fc from 'fast-check';
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { namedOutputSteps } from '../../../shared/plan/bound-outputs.ts';
import type { PlanStep } from '../../../shared/plan/schema.ts';

const step = (fields: Partial<PlanStep>): PlanStep => ({
  id: 's',
  title: 's',
  target: 'tool:echo',
  dependsOn: [],
  ...fields,
});
const names = (fields: Partial<PlanStep>): string[] | undefined => {
  const ids = namedOutputSteps(step(fields));
  return ids === undefined ? undefined : [...ids].sort();
};

describe('namedOutputSteps', () => {
  it('names the steps read through $outputs.<id> in the input, when and assertion', () => {
    expect(
      names({
        input: { a: '{% $outputs.a.value %}', list: ['{% [$objective, $outputs.`b`] %}', 'plain'] },
        when: '{% $outputs.c.ok %}',
        successCriteria: { description: 'larger', assert: '{% $output.n > $outputs.d.n %}' },
      }),
    ).toEqual(['a', 'b', 'c', 'd']);
  });

  it('names nothing for a step whose expressions read no output, and for a step without expressions', () => {
    expect(names({ input: { value: '{% $objective %}' } })).toEqual([]);
    expect(names({ input: { value: 'text' } })).toEqual([]);
  });

  it('gives up (binds every upstream output) for the parent operator, which climbs to other outputs', async () => {
    const source = '$outputs.a.%.b';
    // The reason: JSONata reads step b here, though only a is named.
    expect(await jsonata(source).evaluate({}, { outputs: { a: { x: 1 }, b: 2 } })).toBe(2);
    expect(names({ input: { v: `{% ${source} %}` } })).toBeUndefined();
    expect(names({ input: { v: '{% $outputs.a@$p.b %}' } })).toBeUndefined();
  });

  it('names the steps of a % that stays inside an output, and of % as modulo', () => {
    expect(names({ input: { v: '{% $outputs.a.n % 2 %}', w: '{% $outputs.b.x.%.y %}' } })).toEqual(['a', 'b']);
  });

  it('gives up for $eval, which reads whatever a string built at run time names', async () => {
    const source = '$eval("$outputs." & "b")';
    expect(await jsonata(source).evaluate({}, { outputs: { b: 2 } })).toBe(2);
    expect(names({ input: { v: `{% ${source} %}` } })).toBeUndefined();
  });

  it('binds what an expression can read: over the named outputs JSONata gives what it gives over all of them', async () => {
    const outputs: Record<string, unknown> = {
      a: { x: { y: { b: 'deep' }, b: 'xb' }, b: 'ab', items: [{ b: 1 }, { b: 2 }] },
      b: { secret: 'B' },
    };
    const piece = fc.constantFrom(
      ...['.x', '.y', '.b', '.items', '.*', '[0]', '[b]', '{"k": b}', '.$p', '@$p', '#$i'],
      ...['.%', '.%.%', '[%.b]', '.(%)', '.(%.b)', '.{"k": %.b}', '.$lookup(%, "b")', '.($q := %; $q)'],
    );
    const source = fc
      .tuple(fc.array(piece, { maxLength: 5 }), fc.boolean(), fc.array(piece, { maxLength: 3 }))
      .map(([inner, wrap, outer]) => {
        const path = `$outputs.a${inner.join('')}`;
        return `${wrap ? `(${path})` : path}${outer.join('')}`;
      });
    const value = async (text: string, bound: Record<string, unknown>): Promise<string> => {
      try {
        return JSON.stringify(await jsonata(text).evaluate({}, { outputs: bound }));
      } catch (error) {
        return `error ${(error as { code?: string }).code}`;
      }
    };
    let bound = 0;
    await fc.assert(
      fc.asyncProperty(source, async (text) => {
        const ids = names({ input: { v: `{% ${text} %}` } });
        if (ids === undefined) return;
        bound += 1;
        const named = Object.fromEntries(ids.map((id) => [id, outputs[id]]));
        expect(await value(text, named), text).toBe(await value(text, outputs));
      }),
      { numRuns: 300, seed: 18 },
    );
    // The property is about something: many of the generated expressions are bound to their named outputs (87 of
    // the 300 this seed draws; the rest use a refused construct).
    expect(bound).toBeGreaterThan(60);
  });

  it('gives up for a dynamic reference or an expression that does not parse', () => {
    expect(names({ input: { v: '{% $keys($outputs) %}' } })).toBeUndefined();
    expect(names({ when: '{% $outputs.a. %}' })).toBeUndefined();
  });
});
