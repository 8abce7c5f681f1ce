import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STEP_ID_PATTERN, TARGET_PATTERN } from '../../../shared/plan/schema.ts';
import { validateGenerated } from '../../../shared/plan/validate.ts';
import { buildDirectPlan, directStepId, objectiveInput } from '../../../shared/planner/direct.ts';
import { demoCatalog } from './fixtures.ts';

const catalog = demoCatalog();

describe('directStepId', () => {
  it('derives the id from the target name', () => {
    expect(directStepId('tool:web.search')).toBe('web.search');
    expect(directStepId('agent:a:b/c')).toBe('a-b-c');
  });

  it('gives a valid step id for every valid target', () => {
    const target = fc.stringMatching(TARGET_PATTERN);
    fc.assert(
      fc.property(target, (t) => {
        expect(directStepId(t)).toMatch(STEP_ID_PATTERN);
      }),
    );
  });
});

describe('objectiveInput', () => {
  it('fills the only required string field with the objective', () => {
    expect(objectiveInput({ type: 'object', required: ['query'], properties: { query: { type: 'string' } } })).toEqual({
      query: '{% $objective %}',
    });
  });

  it('leaves the input to the caller when the contract needs more or other than one string', () => {
    expect(objectiveInput({ type: 'object', required: ['a', 'b'], properties: {} })).toBeUndefined();
    expect(objectiveInput({ type: 'object', required: ['n'], properties: { n: { type: 'integer' } } })).toBeUndefined();
    expect(objectiveInput({ type: 'object', properties: { q: { type: 'string' } } })).toBeUndefined();
  });
});

describe('buildDirectPlan', () => {
  it('builds a plan that passes validateGenerated for every demo target', () => {
    for (const capability of catalog.capabilities()) {
      const result = validateGenerated(buildDirectPlan('Do the thing', capability), catalog);
      expect(result.valid ? [] : result.errors).toEqual([]);
    }
  });
});
