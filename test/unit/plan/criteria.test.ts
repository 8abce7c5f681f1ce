/**
 * Checkpoints with evidence (issue 12 §3) in the validator: E_CRITERIA for a description-only criterion on a
 * mutating step or a gate, and where an expected failure may stand; its patterns compile and cannot backtrack.
 */
import { describe, expect, it } from 'vitest';
import type { PlanStep } from '../../../shared/plan/schema.ts';
import { validate } from '../../../shared/plan/validate.ts';
import { catalog, group, plan, step, where } from './plan-testkit.ts';

const check = (steps: PlanStep[]) => validate(plan(steps), catalog);
const noteOnly = { description: 'It went fine' };
const checked = { description: 'It went fine', assert: '{% $output.ok = true %}' };

describe('validate: E_CRITERIA on mutating steps and gates', () => {
  it('refuses a description-only criterion on a mutating step and on a gate', () => {
    const result = check([
      step('d', [], { target: 'tool:deploy', successCriteria: noteOnly }),
      step('r', [], { target: 'human:review', successCriteria: noteOnly }),
    ]);
    expect(where(result)).toEqual(['E_CRITERIA /steps/0/successCriteria', 'E_CRITERIA /steps/1/successCriteria']);
    expect(result.errors[0]?.message).toMatch(/machine-checkable.*a description alone is a note/);
  });

  it('accepts an assert on them, and no criteria at all', () => {
    expect(check([step('d', [], { target: 'tool:deploy', successCriteria: checked })]).valid).toBe(true);
    expect(check([step('r', [], { target: 'human:review', successCriteria: checked })]).valid).toBe(true);
    expect(check([step('d', [], { target: 'tool:deploy' }), step('r', [], { target: 'human:review' })]).valid).toBe(
      true,
    );
  });

  it('accepts a stricter outputSchema as the machine-checkable part, and refuses one that is no JSON Schema', () => {
    const stricter = { description: 'exactly 2', outputSchema: { properties: { value: { const: 2 } } } };
    expect(check([step('d', [], { target: 'tool:deploy', successCriteria: stricter })]).valid).toBe(true);
    const broken = { description: 'broken', outputSchema: { type: 'no-such-type' } };
    expect(where(check([step('d', [], { target: 'tool:deploy', successCriteria: broken })]))).toEqual([
      'E_FIELD /steps/0/successCriteria/outputSchema',
    ]);
  });

  it('keeps a description-only criterion as a note on a step without side effects', () => {
    expect(check([step('a', [], { successCriteria: noteOnly })]).valid).toBe(true);
  });
});

describe('validate: expect.failure', () => {
  it('accepts an expected failure with code and message patterns', () => {
    const s = step('repro', [], { expect: { failure: { code: '^E_HTTP', message: 'timed? ?out' } } });
    expect(check([s])).toMatchObject({ valid: true, plan: { steps: [{ expect: s.expect }] } });
    expect(check([step('any', [], { expect: { failure: {} } })]).valid).toBe(true);
  });

  it('E_CRITERIA on a gate, on a group and beside a success assertion', () => {
    const result = check([
      step('r', [], { target: 'human:review', expect: { failure: {} } }),
      group('g', [], { expect: { failure: {} } }),
      step('c', [], { parentId: 'g' }),
      step('a', [], { expect: { failure: {} }, successCriteria: checked }),
    ]);
    expect(where(result)).toEqual([
      'E_CRITERIA /steps/0/expect',
      'E_CRITERIA /steps/1/expect',
      'E_CRITERIA /steps/3/successCriteria',
    ]);
  });

  it('E_FIELD for a pattern that is no regular expression, E_EXPRESSION_UNSAFE for one that backtracks', () => {
    const result = check([step('a', [], { expect: { failure: { code: '(unclosed', message: '(a+)+$' } } })]);
    expect(where(result)).toEqual([
      'E_FIELD /steps/0/expect/failure/code',
      'E_EXPRESSION_UNSAFE /steps/0/expect/failure/message',
    ]);
  });

  it('E_FIELD for unknown keys and empty patterns', () => {
    const bad = { failure: { code: '', reason: 'x' } } as unknown as PlanStep['expect'];
    expect(where(check([step('a', [], { expect: bad })])).sort()).toEqual([
      'E_FIELD /steps/0/expect/failure/code',
      'E_FIELD /steps/0/expect/failure/reason',
    ]);
  });
});
