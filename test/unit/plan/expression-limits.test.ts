/**
 * The cooperative bounds of plan expressions, in this thread: JSONata's own guardrails (time, depth, sequence
 * length), `$pad` checked before it builds, V8's string limit, all reported as limit outcomes; and everything else
 * evaluated as before.
 */
import { describe, expect, it } from 'vitest';
import { ExpressionLimitError } from '../../../shared/errors.ts';
import {
  defaultExpressionLimits,
  type ExpressionLimits,
  evaluateBounded,
  evaluateRequest,
  isLimitFailure,
  jsonataBody,
} from '../../../shared/plan/expression-limits.ts';

const limits: ExpressionLimits = { ...defaultExpressionLimits(), timeoutMs: 200 };
const bindings = { objective: 'goal', outputs: { a: { n: 2, items: [1, 2, 3] } } };
const one = async (source: string) => (await evaluateRequest({ sources: [source], bindings }, limits))[0];

describe('evaluateBounded', () => {
  it('evaluates ordinary expressions to plain JSON', async () => {
    expect(await evaluateBounded('{% $outputs.a.n + 1 %}', bindings, limits)).toBe(3);
    expect(await evaluateBounded('$outputs.a.items[$ > 1]', bindings, limits)).toEqual([2, 3]);
    expect(await evaluateBounded('$pad("ab", 5, "-")', bindings, limits)).toBe('ab---');
    expect(await evaluateBounded('$pad("ab", -4)', bindings, limits)).toBe('  ab');
    expect(await evaluateBounded('$pad("abcdef", 3)', bindings, limits)).toBe('abcdef');
    expect(await evaluateBounded('{% $outputs.missing %}', bindings, limits)).toBeUndefined();
  });

  it('takes the JSONata between the markers, or the bare source', () => {
    expect(jsonataBody('{%  1 + 1 %}')).toBe('1 + 1');
    expect(jsonataBody('1 + 1')).toBe('1 + 1');
  });
});

describe('evaluateRequest', () => {
  it('stops an endless tail recursion at the time bound', async () => {
    expect(await one('{% ($f := function($n){ $f($n+1) }; $f(0)) %}')).toMatchObject({ ok: false, limit: true });
  });

  it('stops a deep recursion at the depth bound', async () => {
    expect(await one('($f := function($n){ 1 + $f($n+1) }; $f(0))')).toMatchObject({ ok: false, limit: true });
  });

  it('refuses a $pad past the string bound before building it', async () => {
    const outcome = await one('$pad("", 100000000, "x")');
    expect(outcome).toMatchObject({ ok: false, limit: true });
    expect(outcome?.ok === false && outcome.message).toContain('$pad');
  });

  it('reports a string past V8’s maximum length and a range past the sequence bound as limits', async () => {
    expect(await one('$length($reduce([1..40], function($a, $i){ $a & $a }, "x"))')).toMatchObject({ limit: true });
    expect(await one('$count([1..2000000])')).toMatchObject({ ok: false, limit: true });
  });

  it('reports an ordinary error as no limit, each outcome in its place', async () => {
    const outcomes = await evaluateRequest(
      { sources: ['1 +', '$outputs.a.n', '$number("x") + $error("boom")'], bindings },
      limits,
    );
    expect(outcomes.map((o) => o.ok)).toEqual([false, true, false]);
    expect(outcomes.map((o) => (o.ok ? o.value : o.limit))).toEqual([false, 2, false]);
  });
});

describe('isLimitFailure', () => {
  it('knows the guardrails’ codes, V8 range errors and ExpressionLimitError, and nothing else', () => {
    expect(isLimitFailure({ code: 'D1012', message: 'timeout' })).toBe(true);
    expect(isLimitFailure(new RangeError('Invalid string length'))).toBe(true);
    expect(isLimitFailure(new ExpressionLimitError('too big'))).toBe(true);
    expect(isLimitFailure({ code: 'T2001', message: 'not a number' })).toBe(false);
    expect(isLimitFailure(new Error('boom'))).toBe(false);
  });
});
