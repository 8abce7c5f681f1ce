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
    expect(names({ input: { v: '{% $outputs.a.n % 2 %}' } })).toBeUndefined();
  });

  it('gives up for $eval, which reads whatever a string built at run time names', async () => {
    const source = '$eval("$outputs." & "b")';
    expect(await jsonata(source).evaluate({}, { outputs: { b: 2 } })).toBe(2);
    expect(names({ input: { v: `{% ${source} %}` } })).toBeUndefined();
  });

  it('gives up for a dynamic reference or an expression that does not parse', () => {
    expect(names({ input: { v: '{% $keys($outputs) %}' } })).toBeUndefined();
    expect(names({ when: '{% $outputs.a. %}' })).toBeUndefined();
  });
});
