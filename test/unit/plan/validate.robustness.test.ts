import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ISSUE_CODES, type PlanIssue } from '../../../shared/plan/issues.ts';
import type { PlanStep } from '../../../shared/plan/schema.ts';
import { validate, validateGenerated, validateText } from '../../../shared/plan/validate.ts';
import { arbitraryPlan, catalog, group, plan, step } from './plan-testkit.ts';

const POINTER = /^(\/([^~]|~[01])*)*$/;

function expectCodedErrors(errors: readonly PlanIssue[]): void {
  for (const error of errors) {
    expect(ISSUE_CODES).toContain(error.code);
    expect(error.path).toMatch(POINTER);
    expect(typeof error.message).toBe('string');
  }
}

const anything = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withNullPrototype: true,
  withSet: true,
  withSparseArray: true,
  withTypedArray: true,
});

/** A realistic valid plan with one value somewhere inside replaced by anything. */
const corrupted = fc.tuple(fc.nat(), anything).map(([seed, value]) => {
  const p = plan([
    step('search', [], { target: 'tool:search' }),
    group('g', ['search']),
    step('fetch', [], { parentId: 'g', input: { url: '{% $outputs.search.hits[0].url %}' } }),
    step('write', ['g'], { target: 'agent:writer' }),
    step('review', ['write'], { target: 'human:review' }),
  ]) as unknown as Record<string, unknown>;
  const slots: { holder: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    for (const [key, child] of Object.entries(node)) {
      slots.push({ holder: node as Record<string, unknown>, key: Array.isArray(node) ? Number(key) : key });
      walk(child);
    }
  };
  walk(p);
  const slot = slots[seed % slots.length];
  if (slot) (slot.holder as Record<string | number, unknown>)[slot.key] = value;
  return p;
});

describe('validate never throws', () => {
  it('on arbitrary values', () => {
    fc.assert(
      fc.property(anything, (value) => {
        const result = validate(value, catalog);
        expect(result.valid).toBe(false);
        if (!result.valid) expectCodedErrors(result.errors);
      }),
      { numRuns: 300 },
    );
  });

  it('on valid plans with any one value replaced by anything', () => {
    fc.assert(
      fc.property(corrupted, (value) => {
        const result = validateGenerated(value, catalog);
        expectCodedErrors(result.errors);
      }),
      { numRuns: 500 },
    );
  });

  it('on plans of the right shape whose graph and catalog use is random', () => {
    fc.assert(
      fc.property(arbitraryPlan, (p) => {
        expectCodedErrors(validateGenerated(p, catalog).errors);
      }),
      { numRuns: 300 },
    );
    // 300 random plans take 6 s on an idle core and four times that while the suite's other workers share it.
  }, 120_000);

  it('on arbitrary text', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        expectCodedErrors(validateText(text, catalog).errors);
      }),
    );
  });

  it('on a cyclic value and on nesting deep enough to exhaust the stack', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    let deep: unknown = 'x';
    for (let i = 0; i < 200_000; i += 1) deep = { d: deep };
    for (const input of [cyclic, deep]) {
      const result = validate(
        plan([step('a', [], { input: input as PlanStep['input'] }), step('b', ['ghost'])]),
        catalog,
      );
      expect(result.errors).toContainEqual(expect.objectContaining({ code: 'E_FIELD', path: '/steps/0/input' }));
      expect(result.errors).toContainEqual(expect.objectContaining({ code: 'E_UNKNOWN_DEPENDENCY' }));
    }
    const deepText = `{"schemaVersion":1,"revision":1,"objective":"x","steps":[${'['.repeat(300_000)}`;
    expect(validateText(deepText, catalog).errors.map((e) => e.code)).toEqual(['E_JSON']);
  });

  it('on one-megabyte strings', () => {
    const big = 'x'.repeat(1_000_000);
    const result = validate(
      plan([step('a', [], { title: big, description: big, input: { url: big } })], { objective: big }),
      catalog,
    );
    expect(result.errors.map((e) => e.path).sort()).toEqual(['/objective', '/steps/0/title']);
    expect(validateText(big, catalog).errors.map((e) => e.code)).toEqual(['E_JSON']);
  });
});

describe('validate on a large plan', () => {
  it('checks a 5,000-step plan with expressions and raised limits and finds nothing wrong', () => {
    const steps: PlanStep[] = [];
    for (let i = 0; i < 5000; i += 1) {
      const deps = i === 0 ? [] : [`s${i - 1}`, `s${Math.floor(i / 2)}`].filter((d, k, all) => all.indexOf(d) === k);
      steps.push(step(`s${i}`, deps, i === 0 ? {} : { input: { url: `{% $outputs.s${Math.floor(i / 3)}.text %}` } }));
    }
    // How long it takes is `npm run bench:validate`'s business; here only the verdict counts.
    const result = validate(plan(steps), catalog, { maxSteps: 5000, maxDepth: 5000 });
    expect(result.errors).toEqual([]);
  });
});
