import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCertainlyValidStep, isJsonValue, nestsDeeperThan } from '../../../shared/plan/rules/fast-shape.ts';
import { planStepSchema } from '../../../shared/plan/schema.ts';
import { arbitraryStep, step } from './plan-testkit.ts';

// A valid step with one field replaced by anything at all, or with a field added.
const mutatedStep = fc
  .tuple(
    arbitraryStep,
    fc.constantFrom(...Object.keys(planStepSchema.shape), 'extra', '__proto__', 'constructor'),
    fc.anything({ withNullPrototype: true, withBoxedValues: true, withSparseArray: true, withDate: true }),
  )
  .map(([s, key, value]) => {
    const copy: Record<string, unknown> = { ...s };
    Object.defineProperty(copy, key, { value, enumerable: true, configurable: true, writable: true });
    return copy;
  });

describe('isCertainlyValidStep', () => {
  it('accepts only steps the zod schema accepts', () => {
    fc.assert(
      fc.property(fc.oneof(mutatedStep, fc.anything()), (candidate) => {
        if (isCertainlyValidStep(candidate)) expect(planStepSchema.safeParse(candidate).success).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it('accepts every well-formed step, so the fast path is the common one', () => {
    fc.assert(
      fc.property(arbitraryStep, (s) => {
        expect(isCertainlyValidStep(s)).toBe(true);
      }),
    );
    expect(isCertainlyValidStep(step('a'))).toBe(true);
  });

  it('leaves unknown fields, wrong types and out-of-range values to zod', () => {
    expect(isCertainlyValidStep({ ...step('a'), extra: 1 })).toBe(false);
    expect(isCertainlyValidStep({ ...step('a'), maxRetries: 1.5 })).toBe(false);
    expect(isCertainlyValidStep({ ...step('a'), title: ' ' })).toBe(false);
    expect(isCertainlyValidStep({ ...step('a'), input: { a: undefined } })).toBe(false);
    expect(isCertainlyValidStep({ ...step('a'), input: Number.NaN })).toBe(false);
    const { target: _, ...untargeted } = step('a');
    expect(isCertainlyValidStep(untargeted)).toBe(false);
  });
});

describe('isJsonValue / nestsDeeperThan', () => {
  it('accepts JSON values and rejects what JSON cannot hold', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(isJsonValue(v)).toBe(true);
      }),
    );
    for (const bad of [undefined, () => 1, Number.POSITIVE_INFINITY, new Date(), [1, undefined], { a: Symbol('x') }])
      expect(isJsonValue(bad)).toBe(false);
  });

  it('measures nesting without recursion and sees cycles as too deep', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(nestsDeeperThan(deep, 256)).toBe(true);
    expect(nestsDeeperThan([[1]], 2)).toBe(false);
    expect(nestsDeeperThan([[[1]]], 2)).toBe(true);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(nestsDeeperThan(cyclic, 256)).toBe(true);
  });
});
