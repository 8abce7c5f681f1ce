import { describe, expect, it } from 'vitest';
import { withPlainPaths } from '../../../shared/adapters/expressions/plain-path-evaluator.ts';
import {
  defaultExpressionLimits,
  type EvaluationRequest,
  type ExpressionBindings,
  evaluateBounded,
} from '../../../shared/plan/expression-limits.ts';
import { analyseExpression } from '../../../shared/plan/expressions.ts';
import { evaluatePlain, parsePlainExpression } from '../../../shared/plan/plain-paths.ts';

const outputs = {
  a: {
    value: 'x',
    n: 0,
    nul: null,
    arr: [1, 2],
    one: [5],
    empty: [],
    nested: [[1], [2]],
    mixed: [1, [2, [3]]],
    obj: { k: { deep: true }, list: [{ m: 1 }, { m: 2 }] },
    'with space': 'spaced',
  },
  b: [{ value: 1 }, { value: 2 }],
  c: 'text',
  d: null,
  e: { value: [] },
};
const bindings: ExpressionBindings = { objective: 'the objective', outputs, output: { score: 0.5, tags: ['t'] } };

const PLAIN = [
  '$objective',
  '$outputs.a',
  '$outputs.a.value',
  '$outputs.a.n',
  '$outputs.a.nul',
  '$outputs.a.arr',
  '$outputs.a.one',
  '$outputs.a.empty',
  '$outputs.a.nested',
  '$outputs.a.obj.k.deep',
  '$outputs.a.missing',
  '$outputs.a.missing.more',
  '$outputs.`a`.`with space`',
  '$outputs.nope',
  '$outputs.c',
  '$outputs.d',
  '$output.score',
  '$output.tags',
  '[$objective, $outputs.a.value]',
  '[$objective, $outputs.a.arr]',
  '[$objective, $outputs.a.one]',
  '[$objective, $outputs.a.empty]',
  '[$objective, $outputs.a.missing]',
  '[$outputs.a.nested, $outputs.a.mixed]',
  '[$outputs.a.nul, $outputs.a.n, $outputs.a.obj]',
  '[$outputs.a.missing]',
  '[ $objective ,$outputs.e.value ]',
];

/** Paths where JSONata's sequences or inherited properties would matter, and everything that is more than a path. */
const NOT_PLAIN_HERE = [
  '$outputs.b.value', // maps over an array
  '$outputs.a.obj.list.m',
  '$outputs.c.length', // through a string
  '$outputs.d.value', // through null
  '$outputs.a.constructor.name', // inherited
  '$input.id', // not bound in this request
];
const NOT_PLAIN = [
  '$outputs',
  '$objective.x',
  '$outputs.a.value & "!"',
  '$outputs.a[0]',
  '$outputs.a.%.b',
  '$outputs.a@$p.b',
  '$eval("$outputs.a")',
  '$outputs.a.and',
  '$outputs.a.true',
  '$outputs . a',
  '$string($outputs.a)',
  '[$outputs.`a,b`]',
  '[]',
  '$other.a',
  '{"k": $objective}',
];

const jsonataValue = async (source: string): Promise<unknown> =>
  evaluateBounded(source, bindings, defaultExpressionLimits());

describe('plain paths', () => {
  it.each(PLAIN)('answers %s with the value JSONata gives', async (source) => {
    const form = parsePlainExpression(`{% ${source} %}`);
    expect(form).toBeDefined();
    const answer = form && evaluatePlain(form, bindings);
    expect(answer).toBeDefined();
    expect(answer?.value).toEqual(await jsonataValue(source));
  });

  it.each(NOT_PLAIN_HERE)('leaves %s to JSONata where sequences or inherited names would matter', (source) => {
    const form = parsePlainExpression(source);
    expect(form).toBeDefined();
    expect(form && evaluatePlain(form, bindings)).toBeUndefined();
  });

  it.each(NOT_PLAIN)('does not take %s for a plain path', (source) => {
    expect(parsePlainExpression(`{% ${source} %}`)).toBeUndefined();
  });

  it.each([...PLAIN, ...NOT_PLAIN_HERE])('agrees with the validator on the steps %s reads', (source) => {
    const form = parsePlainExpression(source);
    const paths = form === undefined ? [] : form.kind === 'path' ? [form.path] : form.items;
    const read = paths.filter((path) => path.variable === 'outputs').map((path) => path.names[0]);
    const analysis = analyseExpression(source);
    expect(analysis).toMatchObject({ ok: true, problems: [] });
    expect(analysis.ok && analysis.steps).toEqual([...new Set(read)]);
  });
});

describe('withPlainPaths', () => {
  it('answers plain sources itself and sends the rest to the sandbox in one request, in order', async () => {
    const asked: EvaluationRequest[] = [];
    const evaluator = withPlainPaths({
      evaluate: async (request) => {
        asked.push(request);
        return request.sources.map((source) => ({ ok: true, value: `sandbox ${source}` }));
      },
      warm: async () => {},
      close: async () => {},
    });
    const sources = ['{% $outputs.a.value %}', '{% $uppercase($objective) %}', '{% $objective %}', '{% 1 + 1 %}'];
    expect(await evaluator.evaluate({ sources, bindings })).toEqual([
      { ok: true, value: 'x' },
      { ok: true, value: 'sandbox {% $uppercase($objective) %}' },
      { ok: true, value: 'the objective' },
      { ok: true, value: 'sandbox {% 1 + 1 %}' },
    ]);
    expect(asked.map((r) => r.sources)).toEqual([['{% $uppercase($objective) %}', '{% 1 + 1 %}']]);
    expect(await evaluator.evaluate({ sources: ['{% [$objective, $outputs.a.value] %}'], bindings })).toEqual([
      { ok: true, value: ['the objective', 'x'] },
    ]);
    expect(asked).toHaveLength(1);
  });
});
