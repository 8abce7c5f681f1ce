import { describe, expect, it } from 'vitest';
import { contractsEqual } from '../../../shared/plan/catalog.ts';
import { DEMO_METHODS } from '../../../shared/planner/htn/methods/demo.ts';
import { createHtnPlanModel } from '../../../shared/planner/htn/model.ts';
import { demoCatalog, modelRequest } from './fixtures.ts';

const catalog = demoCatalog();

describe('the demo catalog', () => {
  it('loads as a valid catalog', () => {
    expect(catalog.targets().length).toBeGreaterThan(10);
  });

  it('holds every target the demo methods plan with', async () => {
    const model = createHtnPlanModel({ methods: DEMO_METHODS });
    const objectives = [
      'Compile a competitor research report on Acme, Globex and Initech',
      'Triage the incident in checkout-api',
      'Release version 2.4.0 of billing',
      'Summarise our onboarding docs',
    ];
    for (const objective of objectives) {
      const plan = model.decompose(modelRequest(objective, catalog)).plan;
      for (const step of plan.steps) if (step.target !== null) expect(catalog.has(step.target)).toBe(true);
    }
  });

  it('declares alternatives in both directions with equal contracts', () => {
    const withAlternatives = catalog.capabilities().filter((c) => c.alternatives?.length);
    expect(withAlternatives.length).toBeGreaterThanOrEqual(2);
    for (const capability of withAlternatives)
      for (const alternative of capability.alternatives ?? []) {
        const other = catalog.get(alternative);
        expect(other?.alternatives).toContain(capability.target);
        expect(contractsEqual(other?.inputSchema, capability.inputSchema)).toBe(true);
      }
  });

  it('marks deploys, rollbacks, restarts and publishing as mutating', () => {
    const mutating = catalog
      .capabilities()
      .filter((c) => c.sideEffect === 'mutating')
      .map((c) => c.target);
    expect(mutating.sort()).toEqual([
      'tool:deploy.release',
      'tool:deploy.rollback',
      'tool:docs.publish',
      'tool:service.restart',
    ]);
  });

  it('checks realistic inputs against the contracts and rejects unknown fields', () => {
    expect(catalog.validateInput('tool:web.search', { query: 'acme pricing', maxResults: 5 })).toEqual({ ok: true });
    expect(catalog.validateInput('tool:web.search', { query: 'x', extra: true }).ok).toBe(false);
    expect(catalog.validateInput('tool:ci.build', { service: 's', version: '1.2.3', ref: 'v1.2.3' })).toEqual({
      ok: true,
    });
    expect(catalog.validateInput('tool:ci.build', { service: 's', version: 'latest', ref: 'main' }).ok).toBe(false);
  });
});
