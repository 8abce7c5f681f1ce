import { describe, expect, it } from 'vitest';
import { decodePlan } from '../../../shared/plan/codec.ts';
import { MAX_WATCHES_PER_PLAN, MAX_WATCHES_PER_STEP, type PlanStep } from '../../../shared/plan/schema.ts';
import { validate, validateGenerated } from '../../../shared/plan/validate.ts';
import { catalog, plan, step, where } from './plan-testkit.ts';

const keys = (n: number, prefix = 'web:page') => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

/** Independent steps, each watching `each` resources: `steps × each` watches in all. */
const watchingSteps = (steps: number, each: number): PlanStep[] =>
  Array.from({ length: steps }, (_, i) => step(`s${i}`, [], { watches: keys(each, `s${i}`) }));

/** An array whose items throw when read: only its length may be looked at. */
const unreadable = (length: number): string[] =>
  new Proxy(new Array<string>(length).fill('x'), {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) throw new Error(`watch ${key} was read`);
      return Reflect.get(target, key, receiver);
    },
  });

describe('validate: watches (E_LIMIT)', () => {
  it('refuses 101 watches on one step with E_LIMIT at its watches, and takes 100', () => {
    const at = (n: number) => plan([step('a'), step('b', [], { watches: keys(n) })]);
    expect(validateGenerated(at(MAX_WATCHES_PER_STEP), catalog)).toMatchObject({ valid: true });
    const result = validateGenerated(at(MAX_WATCHES_PER_STEP + 1), catalog);
    expect(where(result)).toEqual(['E_LIMIT /steps/1/watches']);
    expect(result.errors[0]?.message).toBe('101 watches exceed the limit of 100 per step');
  });

  it('refuses more than 10,000 watches across a plan with E_LIMIT at /steps, and takes 10,000', () => {
    const full = plan(watchingSteps(MAX_WATCHES_PER_PLAN / MAX_WATCHES_PER_STEP, MAX_WATCHES_PER_STEP));
    expect(validate(full, catalog, { maxSteps: 200 })).toMatchObject({ valid: true });
    const result = validate(plan(watchingSteps(101, MAX_WATCHES_PER_STEP)), catalog, { maxSteps: 200 });
    expect(where(result)).toEqual(['E_LIMIT /steps']);
    expect(result.errors[0]?.message).toBe('10100 watches exceed the limit of 10000 per plan');
  });

  it('reads no watch of a list over the limit, and reports nothing about its keys', () => {
    const hostile = plan([step('a', [], { watches: unreadable(100_000) })]);
    expect(where(validate(hostile, catalog))).toEqual(['E_LIMIT /steps', 'E_LIMIT /steps/0/watches']);
  });

  it('still reports the other problems of a step whose watches are over the limit', () => {
    const over = plan([step('a', ['ghost'], { watches: keys(MAX_WATCHES_PER_STEP + 1), maxRetries: 11 })]);
    expect(where(validate(over, catalog))).toEqual([
      'E_LIMIT /steps/0/watches',
      'E_FIELD /steps/0/maxRetries',
      'E_UNKNOWN_DEPENDENCY /steps/0/dependsOn/0',
    ]);
  });

  it('refuses the same plan when it is decoded from JSON', () => {
    const text = JSON.stringify(plan([step('a', [], { watches: keys(MAX_WATCHES_PER_STEP + 1) })]));
    expect(decodePlan(text)).toMatchObject({ ok: false, errors: [{ code: 'E_LIMIT', path: '/steps/0/watches' }] });
  });
});
