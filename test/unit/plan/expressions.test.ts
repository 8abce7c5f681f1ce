import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  analyseExpression,
  collectExpressions,
  containsExpression,
  evaluateExpression,
  expressionBody,
  isExpression,
  parseExpression,
  referencedSteps,
  stepReferences,
} from '../../../shared/plan/expressions.ts';

const astOf = (source: string): unknown => {
  const parsed = parseExpression(source);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.ast;
};
const refs = (source: string): string[] => [...referencedSteps(astOf(source))].sort();
const problems = (source: string): string[] => stepReferences(astOf(source)).problems;

describe('isExpression / expressionBody', () => {
  it('recognises only strings that are one whole {% … %} expression', () => {
    expect(isExpression('{% $outputs.a %}')).toBe(true);
    expect(isExpression('{%%}')).toBe(true);
    expect(isExpression('{%\n  1 + 1\n%}')).toBe(true);
    expect(isExpression('x {% 1 %}')).toBe(false);
    expect(isExpression('{% 1 %} ')).toBe(false);
    expect(isExpression('{ % 1 % }')).toBe(false);
    expect(isExpression(42)).toBe(false);
    expect(isExpression(null)).toBe(false);
  });

  it('returns the trimmed JSONata between the markers', () => {
    expect(expressionBody('{%  $outputs.a.b  %}')).toBe('$outputs.a.b');
    expect(expressionBody('plain')).toBe('plain');
  });
});

describe('parseExpression', () => {
  it('parses bare JSONata and the {% … %} form alike', () => {
    expect(parseExpression('$outputs.a + 1').ok).toBe(true);
    expect(parseExpression('{% $outputs.a + 1 %}')).toEqual(parseExpression('$outputs.a + 1'));
  });

  it('reports a syntax error with its position', () => {
    const parsed = parseExpression('{% $outputs.search.hits[ %}');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(/position \d+/);
    expect(parseExpression('{%   %}').ok).toBe(false);
  });
});

describe('referencedSteps / stepReferences', () => {
  it('finds $outputs.X, quoted and backquoted names', () => {
    expect(refs('$outputs.write.report')).toEqual(['write']);
    expect(refs('$outputs."fetch-a".text & $outputs.`b.c`.x')).toEqual(['b.c', 'fetch-a']);
  });

  it('finds references everywhere in the expression', () => {
    const source = '$count($outputs.a.hits) > 0 ? {"x": $outputs.b, "y": [$outputs.c]} : ($v := 1; $outputs.d.e[0])';
    expect(refs(source)).toEqual(['a', 'b', 'c', 'd']);
    expect(refs('$map($outputs.a.items, function($i) { $i & $outputs.b.x })')).toEqual(['a', 'b']);
    expect(problems(source)).toEqual([]);
  });

  it('reports $outputs["X"] as a filter that does not select X, yet lists X', () => {
    expect(refs("$outputs['X']")).toEqual(['X']);
    expect(problems("$outputs['X'].a")[0]).toMatch(/JSONata filter that yields every output/);
  });

  it('reports dynamic references it cannot check', () => {
    for (const source of [
      '$outputs[$x]',
      '$lookup($outputs, "a")',
      '$outputs',
      '$outputs.*',
      '$keys($outputs)',
      '($o := $outputs; $o.a)',
      '$outputs[0]',
      '$outputs.($x)',
    ])
      expect(problems(source).join(), source).toMatch(/dynamic step reference/);
  });

  it('reports the parent operator when it climbs from $outputs.X back to $outputs', () => {
    for (const source of [
      '$outputs.a.%.b',
      '$outputs.a.x.%.%.b',
      '$outputs.a.x.(%.%.b)',
      '$outputs.a[%.b]',
      '$outputs.a.$lookup(%, "b")',
      '($outputs.a.x).%.%.b',
      '$outputs.a.(%)',
    ])
      expect(problems(source).join(), source).toMatch(/parent operator % climbs from \$outputs\.a at position \d+/);
  });

  it('accepts the parent operator inside a step output, and % as modulo', () => {
    for (const source of ['$outputs.a.x.%.y', '$outputs.a.items.(%.name)', '$outputs.a.n % 2']) {
      expect(problems(source), source).toEqual([]);
      expect(refs(source), source).toEqual(['a']);
    }
  });

  it('reports a focus binding on the step name, which keeps $outputs as the context', () => {
    expect(problems('$outputs.a@$p.b').join()).toMatch(/\$outputs\.a@\$p at position \d+ keeps \$outputs/);
    expect(problems('$outputs.a#$i.b')).toEqual([]);
  });

  it('reports $eval however it is reached, since its string is known only at run time', () => {
    for (const source of ['$eval("$outputs.b")', '$eval($outputs.a.code)', '($e := $eval; $e("1"))', '$eval("1")'])
      expect(problems(source).join(), source).toMatch(/\$eval at position \d+ evaluates a string at run time/);
  });

  it('ignores other variables and plain paths', () => {
    expect(refs('$objective & outputs.a & $output.text')).toEqual([]);
    expect(problems('$objective & outputs.a & $output.text')).toEqual([]);
  });
});

describe('analyseExpression', () => {
  it('gives the steps and problems the AST walk gives', () => {
    expect(analyseExpression('{% $outputs.a.text & $outputs.b %}')).toEqual({
      ok: true,
      steps: ['a', 'b'],
      problems: [],
      hazards: [],
    });
    const bad = analyseExpression('{% $outputs.a.hits[ %}');
    expect(bad).toEqual({ ok: false, message: (parseExpression('$outputs.a.hits[') as { message: string }).message });
  });

  it('keeps keywords and positions right', () => {
    expect(analyseExpression('$outputs.and').ok).toBe(parseExpression('$outputs.and').ok);
    const dynamic = analyseExpression('$outputs.abcdefghij.x & $outputs[$k]');
    expect(dynamic.ok && dynamic.problems[0]).toBe(problems('$outputs.abcdefghij.x & $outputs[$k]')[0]);
  });

  it('agrees with parsing the expression itself for any step ids', () => {
    const id = fc.oneof(
      fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/),
      fc.constantFrom('and', 'or', 'in', 'true', 'null', 'function'),
    );
    const shapes = [
      (a: string, b: string) => `$outputs.${a}.text & " " & $outputs.${b}.x`,
      (a: string, b: string) => `$count($outputs.${a}.hits) > $outputs.${b}`,
      (a: string, b: string) => `"$outputs.${a}" & $outputs.${b}.y[0]`,
      (a: string, b: string) => `$outputs.${a}.(${b})`,
      (a: string, b: string) => `$outputs.${a}${b === 'x' ? '' : '.'}[`,
      (a: string, b: string) => `/* $outputs.${a} */ $outputs.${b}`,
      (a: string, b: string) => `$outputs.${a}é.x & $outputs.${b}"q"`,
      (a: string, b: string) => `$outputs.${a}-$outputs.${b}`,
      (a: string, b: string) => `$x$outputs.${a} & \`$outputs.${b}\``,
    ];
    fc.assert(
      fc.property(id, id, fc.constantFrom(...shapes), (a, b, shape) => {
        const source = shape(a, b);
        const analysis = analyseExpression(source);
        const parsed = parseExpression(source);
        expect(analysis.ok).toBe(parsed.ok);
        if (analysis.ok && parsed.ok) {
          const direct = stepReferences(parsed.ast);
          expect([...analysis.steps].sort()).toEqual([...direct.steps].sort());
          expect(analysis.problems).toEqual(direct.problems);
        }
      }),
    );
  });
});

describe('collectExpressions / containsExpression', () => {
  it('lists every expression in a JSON value with its pointer', () => {
    const input = { q: '{% $objective %}', list: [1, '{% $outputs.a %}', { 'x/y': '{% 2 %}' }], plain: '{% no' };
    expect(collectExpressions(input, '/steps/0/input')).toEqual([
      { path: '/steps/0/input/q', source: '{% $objective %}' },
      { path: '/steps/0/input/list/1', source: '{% $outputs.a %}' },
      { path: '/steps/0/input/list/2/x~1y', source: '{% 2 %}' },
    ]);
    expect(collectExpressions('{% 1 %}', '/in')).toEqual([{ path: '/in', source: '{% 1 %}' }]);
    expect(containsExpression(input)).toBe(true);
    expect(containsExpression({ a: ['{% no', 1, null] })).toBe(false);
  });

  it('finds nothing in values without expressions', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const hasOne = JSON.stringify(value).includes('{%');
        if (!hasOne) {
          expect(collectExpressions(value, '')).toEqual([]);
          expect(containsExpression(value)).toBe(false);
        }
      }),
    );
  });
});

describe('evaluateExpression', () => {
  it('binds $objective, $outputs and $output', async () => {
    const bindings = { objective: 'goal', outputs: { write: { report: 'r' }, 'fetch-a': { n: 2 } }, output: { ok: 1 } };
    expect(await evaluateExpression('{% $outputs.write.report & "/" & $objective %}', bindings)).toBe('r/goal');
    expect(await evaluateExpression('$outputs."fetch-a".n * 2', bindings)).toBe(4);
    expect(await evaluateExpression('{% $output.ok = 1 %}', bindings)).toBe(true);
  });

  it('leaves $output unbound when none is given', async () => {
    expect(await evaluateExpression('{% $exists($output) %}', { objective: '', outputs: {} })).toBe(false);
  });

  it('rejects an expression that does not parse', async () => {
    await expect(evaluateExpression('{% 1 + %}', { objective: '', outputs: {} })).rejects.toBeTruthy();
  });
});
