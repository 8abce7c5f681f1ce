/**
 * What the validator refuses statically (E_EXPRESSION_UNSAFE): regular expressions whose backtracking explodes
 * (nested quantifiers, backreferences) and functions that recurse through their names; and the shapes it accepts.
 */
import { describe, expect, it } from 'vitest';
import { expressionHazards, regexHazard } from '../../../shared/plan/expression-hazards.ts';
import { parseExpression } from '../../../shared/plan/expressions.ts';
import { validate } from '../../../shared/plan/validate.ts';
import { catalog, plan, step, where } from './plan-testkit.ts';

const hazardsOf = (source: string): string[] => {
  const parsed = parseExpression(source);
  if (!parsed.ok) throw new Error(parsed.message);
  return expressionHazards(parsed.ast);
};

describe('regexHazard', () => {
  it.each(['(a+)+$', '(a*)*b', '(\\w+\\s?)*$', '((ab)*c)+', '(a+){2,9}', '(?:x+y?)+', '(?<w>a+)*'])(
    'refuses nested quantifiers in /%s/',
    (source) => {
      expect(regexHazard(source)).toContain('nests quantifiers');
    },
  );

  it.each(['(a)\\1', '(?<x>a)\\k<x>'])('refuses the backreference in /%s/', (source) => {
    expect(regexHazard(source)).toContain('backreference');
  });

  it.each([
    '^a+$',
    '[a-z]+@[a-z]+\\.com',
    '(ab)+',
    '(a|b)*c',
    '(a+)?b',
    '(\\d{1,3}\\.){3}\\d{1,3}',
    '[(+*)]+',
    '\\(a+\\)+',
    'x{2}',
  ])('accepts /%s/', (source) => {
    expect(regexHazard(source)).toBeUndefined();
  });
});

describe('expressionHazards', () => {
  it('sees every regular expression literal of an expression', () => {
    expect(hazardsOf('$match($outputs.a.text, /(a+)+$/)')).toHaveLength(1);
    expect(hazardsOf('$replace($outputs.a.text, /ab+c/, "x")')).toEqual([]);
  });

  it('refuses a function that calls itself, directly or through another', () => {
    expect(hazardsOf('($f := function($n){ $f($n+1) }; $f(0))')[0]).toContain('recursive function $f → $f');
    const mutual = hazardsOf('($a := function($n){ $b($n) }; $b := function($n){ $a($n) }; $a(1))');
    expect(mutual[0]).toMatch(/recursive function (\$a → \$b → \$a|\$b → \$a → \$b)/);
  });

  it('accepts functions that call other functions without a cycle', () => {
    expect(hazardsOf('($inc := function($n){ $n + 1 }; $twice := function($n){ $inc($inc($n)) }; $twice(1))')).toEqual(
      [],
    );
    expect(hazardsOf('$map([1,2,3], function($v){ $v * 2 })')).toEqual([]);
  });
});

describe('validate: E_EXPRESSION_UNSAFE', () => {
  it('reports each unsafe expression where it is, in input, when and successCriteria.assert', () => {
    const steps = [
      step('a', [], { input: { url: '{% $match($objective, /(a+)+$/) %}' } }),
      step('b', [], { when: '{% ($f := function($n){ $f($n) }; $f(1)) %}' }),
      step('c', [], { successCriteria: { description: 'd', assert: '{% $contains($objective, /(x)\\1/) %}' } }),
    ];
    expect(where(validate(plan(steps), catalog))).toEqual([
      'E_EXPRESSION_UNSAFE /steps/0/input/url',
      'E_EXPRESSION_UNSAFE /steps/1/when',
      'E_EXPRESSION_UNSAFE /steps/2/successCriteria/assert',
    ]);
  });
});
