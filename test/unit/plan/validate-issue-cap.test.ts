import { describe, expect, it } from 'vitest';
import { MAX_ISSUE_CHARS, MAX_LISTED_ISSUES } from '../../../shared/plan/bounded-text.ts';
import { issueTotal } from '../../../shared/plan/issues.ts';
import type { PlanStep } from '../../../shared/plan/schema.ts';
import { validate } from '../../../shared/plan/validate.ts';
import { catalog, plan, step } from './plan-testkit.ts';

const invalid = (steps: PlanStep[]) => {
  const result = validate(plan(steps), catalog);
  if (result.valid) throw new Error('expected an invalid plan');
  return result.errors;
};

describe('validate: a plan with more issues than a list holds', () => {
  it('lists the first 100 of 150,000 duplicate dependencies and counts the rest in a final E_MORE_ISSUES', () => {
    const errors = invalid([
      step('a'),
      step(
        'b',
        Array.from({ length: 150_000 }, () => 'a'),
      ),
    ]);

    expect(errors).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(errors[0]).toEqual({
      code: 'E_FIELD',
      path: '/steps/1/dependsOn/1',
      message: '"a" is listed twice in dependsOn',
    });
    expect(errors.at(-1)).toEqual({ code: 'E_MORE_ISSUES', path: '', message: 'and 149899 more' });
    expect(issueTotal(errors)).toBe(149_999);
  });

  it('reports 150,000 dependencies that are not strings as issues rather than a failure to check', () => {
    const errors = invalid([step('a'), step('b', Array.from({ length: 150_000 }, () => 1) as unknown as string[])]);

    expect(errors).toHaveLength(MAX_LISTED_ISSUES + 1);
    expect(errors[0]).toMatchObject({ code: 'E_FIELD', path: '/steps/1/dependsOn/0' });
    expect(errors.at(-1)).toMatchObject({ code: 'E_MORE_ISSUES', message: 'and 149900 more' });
  });

  it('clips the message and the path of an issue made from a long value', () => {
    const long = 'x'.repeat(1_000_000);
    const errors = invalid([step('a', [long]), step('b', [], { input: { [long]: 1 } })]);

    expect(errors.length).toBeGreaterThan(1);
    for (const error of errors) {
      expect(error.message.length).toBeLessThanOrEqual(MAX_ISSUE_CHARS);
      expect(error.path.length).toBeLessThanOrEqual(MAX_ISSUE_CHARS);
    }
  });
});
