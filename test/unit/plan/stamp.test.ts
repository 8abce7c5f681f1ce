import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import type { Capability, Plan, PlanStep } from '../../../shared/plan/schema.ts';
import { isStamped, stampPlan, validateUnlessStamped } from '../../../shared/plan/stamp.ts';

const contract: Capability['inputSchema'] = {
  type: 'object',
  required: ['value'],
  properties: { value: { type: 'string' } },
  additionalProperties: false,
};
const echo = (description = 'echo'): Capability => ({
  target: 'tool:echo',
  description,
  sideEffect: 'none',
  inputSchema: contract,
  outputSchema: contract,
});
const catalog = loadCatalog({ capabilities: [echo()] });
const limits = { maxSteps: 8, maxDepth: 4 };

const step = (id: string, fields: Partial<PlanStep> = {}): PlanStep => ({
  id,
  title: id,
  target: 'tool:echo',
  dependsOn: [],
  input: { value: id },
  inputSchema: contract,
  outputSchema: contract,
  ...fields,
});
const plan: Plan = { schemaVersion: 1, revision: 1, objective: 'stamped', steps: [step('a'), step('b')] };

describe('validation stamps', () => {
  it('match the same plan against the same catalog and limits, also after a JSON round trip', () => {
    const stamp = stampPlan(plan, catalog, limits);
    expect(isStamped(stamp, plan, catalog, limits)).toBe(true);
    expect(isStamped(stamp, JSON.parse(JSON.stringify(plan)), catalog, limits)).toBe(true);
    // Another catalog instance loaded from the same document is the same catalog.
    expect(isStamped(stamp, plan, loadCatalog({ capabilities: [echo()] }), { ...limits })).toBe(true);
  });

  it('do not match another catalog, other limits or a changed plan', () => {
    const stamp = stampPlan(plan, catalog, limits);
    expect(isStamped(stamp, plan, loadCatalog({ capabilities: [echo('echo, v2')] }), limits)).toBe(false);
    expect(isStamped(stamp, plan, catalog, { maxSteps: 9, maxDepth: 4 })).toBe(false);
    expect(isStamped(stamp, plan, catalog, { maxSteps: 8, maxDepth: 5 })).toBe(false);
    expect(isStamped(stamp, { ...plan, steps: [step('a'), step('b', { input: { value: 1 } })] }, catalog, limits)).toBe(
      false,
    );
    expect(isStamped(stamp, { ...plan, objective: 'another' }, catalog, limits)).toBe(false);
  });

  it('count the default limits as the limits they stand for', () => {
    const stamp = stampPlan(plan, catalog, {});
    expect(isStamped(stamp, plan, catalog, { maxSteps: 64, maxDepth: 16 })).toBe(true);
  });

  it('prove nothing without a stamp or without a plan', () => {
    expect(isStamped(undefined, plan, catalog, limits)).toBe(false);
    const stamp = stampPlan(plan, catalog, limits);
    for (const value of [undefined, null, 'plan', [plan]]) expect(isStamped(stamp, value, catalog, limits)).toBe(false);
  });

  it('let StartRun take a stamped candidate as revision 1 without validating it', () => {
    const submitted = { ...plan, revision: 3 };
    const stamp = stampPlan(submitted, catalog, limits);
    expect(validateUnlessStamped(submitted, stamp, catalog, limits, 1)).toEqual({
      valid: true,
      plan: { ...plan, revision: 1 },
      errors: [],
    });
  });

  it('validate a candidate in full when its stamp does not match', () => {
    const stamp = stampPlan(plan, catalog, limits);
    const tight = { maxSteps: 1, maxDepth: 4 };
    const result = validateUnlessStamped(plan, stamp, catalog, tight, 1);
    expect(result.valid).toBe(false);
    if (!result.valid) expect(result.errors.map((e) => e.code)).toEqual(['E_TOO_MANY_STEPS']);
    const unstamped = validateUnlessStamped({ ...plan, revision: 2 }, undefined, catalog, limits, 1);
    expect(unstamped).toMatchObject({ valid: true, plan: { revision: 1 } });
  });
});
