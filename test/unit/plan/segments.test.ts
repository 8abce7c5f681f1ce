import { describe, expect, it } from 'vitest';
import { conformanceCatalog, CONFORMANCE_TARGETS as T } from '../../../shared/capabilities/conformance.ts';
import { CatalogError } from '../../../shared/errors.ts';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import { type PlanStep, planJsonSchema } from '../../../shared/plan/schema.ts';
import { validate } from '../../../shared/plan/validate.ts';
import { group, plan, where } from './plan-testkit.ts';

const catalog = loadCatalog(conformanceCatalog());

const step = (id: string, target: string, fields: Partial<PlanStep> = {}): PlanStep => {
  const capability = catalog.get(target);
  if (!capability) throw new Error(target);
  return {
    id,
    title: `Step ${id}`,
    target,
    dependsOn: [],
    inputSchema: capability.inputSchema,
    outputSchema: capability.outputSchema,
    ...fields,
  };
};

const check = (steps: PlanStep[]) => validate(plan(steps), catalog);

describe('validate: segments', () => {
  it('accepts a mutating step in a segment without a rollbackHint when its capability names a compensation', () => {
    expect(check([step('pay', T.ledger, { input: { entry: 1 }, segment: 'release' })]).errors).toEqual([]);
  });

  it('still requires the rollbackHint of a mutating step outside any segment', () => {
    expect(where(check([step('pay', T.ledger, { input: { entry: 1 } })]))).toEqual([
      'E_MISSING_ROLLBACK /steps/0/rollbackHint',
    ]);
  });

  it('requires a rollbackHint a person acts on for a mutating step in a segment that has no compensation', () => {
    const undo = step('undo', T.unledger, { input: { entryId: 'e' }, segment: 'release' });
    const result = check([undo]);
    expect(where(result)).toEqual(['E_MISSING_ROLLBACK /steps/0/rollbackHint']);
    expect(result.errors[0]?.message).toContain('segment "release"');
    expect(check([{ ...undo, rollbackHint: 'remove it by hand' }]).errors).toEqual([]);
  });

  it('rejects a malformed segment name and a segment on a group', () => {
    expect(where(check([step('a', T.echo, { input: { value: 1 }, segment: 'no spaces' })]))).toEqual([
      'E_FIELD /steps/0/segment',
    ]);
    const grouped = [group('g', [], { segment: 'release' }), step('a', T.echo, { input: { value: 1 }, parentId: 'g' })];
    expect(where(check(grouped))).toContain('E_FIELD /steps/0/segment');
  });

  it('publishes segment in the plan JSON Schema and the new statuses', () => {
    const text = JSON.stringify(planJsonSchema());
    expect(text).toContain('"segment"');
    expect(text).toContain('"compensation_failed"');
  });
});

describe('catalog: compensations', () => {
  const ledger = conformanceCatalog().capabilities.find((c) => c.target === T.ledger);

  it('refuses a compensation whose target is not in the catalog', () => {
    const broken = { ...ledger, compensate: { target: 'tool:nowhere', input: {} } };
    expect(() => loadCatalog({ capabilities: [broken] })).toThrow(CatalogError);
    expect(() => loadCatalog({ capabilities: [broken] })).toThrow(/compensate\/target: unknown target tool:nowhere/);
  });

  it('refuses a capability that compensates itself', () => {
    const self = { ...ledger, compensate: { target: T.ledger, input: {} } };
    expect(() => loadCatalog({ capabilities: [self] })).toThrow(/cannot compensate/);
  });
});

describe('validate: onFailure', () => {
  it('accepts every policy on a step outside a segment', () => {
    for (const onFailure of ['retry-then-fail', 'continue', 'pause', 'replan', 'fail-run'] as const)
      expect(check([step('a', T.echo, { input: { value: 1 }, onFailure })]).errors).toEqual([]);
  });

  it('rejects an unknown policy, and a policy on a group', () => {
    const unknown = step('a', T.echo, { input: { value: 1 }, onFailure: 'ignore' as never });
    expect(where(check([unknown]))).toEqual(['E_FIELD /steps/0/onFailure']);
    const grouped = [
      group('g', [], { onFailure: 'continue' }),
      step('a', T.echo, { input: { value: 1 }, parentId: 'g' }),
    ];
    expect(where(check(grouped))).toContain('E_FIELD /steps/0/onFailure');
  });

  it('E_FAILURE_POLICY for continue or replan inside a segment: its failure is compensated', () => {
    const inSegment = (onFailure: PlanStep['onFailure']) =>
      check([step('a', T.ledger, { input: { entry: 1 }, segment: 's', onFailure })]);
    expect(where(inSegment('continue'))).toEqual(['E_FAILURE_POLICY /steps/0/onFailure']);
    expect(where(inSegment('replan'))).toEqual(['E_FAILURE_POLICY /steps/0/onFailure']);
    expect(inSegment('fail-run').errors).toEqual([]);
    expect(inSegment('pause').errors).toEqual([]);
  });
});
