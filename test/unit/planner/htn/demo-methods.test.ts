import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Catalog } from '../../../../shared/plan/catalog.ts';
import { buildGraph, effectiveUpstream } from '../../../../shared/plan/graph.ts';
import type { Plan, PlanStep } from '../../../../shared/plan/schema.ts';
import { MAX_OBJECTIVE_LENGTH } from '../../../../shared/plan/schema.ts';
import { type PlanLimits, validateGenerated } from '../../../../shared/plan/validate.ts';
import { createHtnPlanModel } from '../../../../shared/planner/htn/model.ts';
import { catalogWithout, demoCatalog, modelRequest } from '../fixtures.ts';

const catalog = demoCatalog();
const model = createHtnPlanModel();

const planFor = (objective: string, limits: Partial<PlanLimits> = {}, cat: Catalog = catalog) =>
  model.decompose(modelRequest(objective, cat, limits));

const expectValid = (plan: Plan, cat: Catalog = catalog, limits: Partial<PlanLimits> = {}): void => {
  const result = validateGenerated(plan, cat, limits);
  expect(result.valid ? [] : result.errors).toEqual([]);
};

const step = (plan: Plan, id: string): PlanStep => {
  const found = plan.steps.find((s) => s.id === id);
  if (!found) throw new Error(`no step ${id} in ${plan.steps.map((s) => s.id).join(', ')}`);
  return found;
};
const childrenOf = (plan: Plan, id: string): string[] => plan.steps.filter((s) => s.parentId === id).map((s) => s.id);
const upstreamOf = (plan: Plan, id: string): string[] => effectiveUpstream(buildGraph(plan.steps), id);

describe('demo methods: competitor research', () => {
  const objective = 'Compile a competitor research report on Acme, Globex and Initech';

  it('plans a valid plan with one parallel search → fetch → extract branch per competitor', () => {
    const { plan } = planFor(objective);
    expectValid(plan);
    expect(childrenOf(plan, 'research')).toEqual(['research.acme', 'research.globex', 'research.initech']);
    for (const branch of childrenOf(plan, 'research')) {
      expect(childrenOf(plan, branch)).toEqual([`${branch}.search`, `${branch}.fetch`, `${branch}.extract`]);
      expect(step(plan, branch).dependsOn).toEqual([]);
      expect(step(plan, `${branch}.extract`).confidenceThreshold).toBeGreaterThan(0);
    }
  });

  it('joins the branches in a writing step, gates it with a human review and publishes with a rollback hint', () => {
    const { plan } = planFor(objective);
    expect(step(plan, 'write')).toMatchObject({ target: 'agent:report.writer', dependsOn: ['research'] });
    expect(upstreamOf(plan, 'write')).toEqual(
      expect.arrayContaining(['research.acme.extract', 'research.globex.extract', 'research.initech.extract']),
    );
    expect(step(plan, 'review')).toMatchObject({ target: 'human:editor.review', dependsOn: ['write'] });
    expect(step(plan, 'review').approval?.timeoutSeconds).toBeGreaterThan(0);
    const publish = step(plan, 'publish');
    expect(publish).toMatchObject({ target: 'tool:docs.publish', dependsOn: ['review'] });
    expect(publish.rollbackHint).toBeTruthy();
    expect(publish.when).toContain('$outputs.review.approved');
  });

  it('researches a single subject along parallel aspects', () => {
    const { plan } = planFor('Write a competitive landscape report on the European CRM market.');
    expectValid(plan);
    expect(childrenOf(plan, 'research')).toEqual([
      'research.pricing',
      'research.product',
      'research.customers',
      'research.news',
    ]);
    expect(step(plan, 'research.pricing.extract').input).toMatchObject({ subject: 'European CRM market' });
  });

  it('merges competitors beyond the branch cap into one last branch', () => {
    const names = Array.from({ length: 9 }, (_, i) => `Vendor${i + 1}`);
    const { plan } = planFor(`competitor analysis of ${names.join(', ')}`);
    expectValid(plan);
    const branches = childrenOf(plan, 'research');
    expect(branches).toHaveLength(6);
    expect(branches.at(-1)).toBe('research.others');
    expect(step(plan, 'research.others.extract').input).toMatchObject({
      subject: 'Vendor6, Vendor7, Vendor8, Vendor9',
    });
  });

  it('uses search snippets when the catalog has no page fetcher', () => {
    const lean = catalogWithout(catalog, 'tool:web.fetch', 'tool:web.fetch-archive');
    const { plan, choices } = planFor(objective, {}, lean);
    expectValid(plan, lean);
    expect(childrenOf(plan, 'research.acme')).toEqual(['research.acme.search', 'research.acme.extract']);
    expect(choices.filter((c) => c.task === 'research-subject').map((c) => c.method)).toEqual([
      'search-snippets-extract',
      'search-snippets-extract',
      'search-snippets-extract',
    ]);
  });

  it('fits fewer branches into a tight step limit and stays valid', () => {
    const { plan } = planFor(objective, { maxSteps: 13 });
    expectValid(plan, catalog, { maxSteps: 13 });
    expect(childrenOf(plan, 'research')).toHaveLength(2);
  });

  it('keeps objective text that looks like an expression a literal', () => {
    const { plan } = planFor('competitor research on {% $outputs.x %}');
    expectValid(plan);
    expect(JSON.stringify(plan)).not.toContain('"{% $outputs.x %}"');
  });
});

describe('demo methods: incident triage', () => {
  it('reads logs, metrics and deploys in parallel, diagnoses, asks approval, mitigates and verifies', () => {
    const { plan } = planFor('Triage the incident in checkout-api');
    expectValid(plan);
    expect(childrenOf(plan, 'evidence')).toEqual(['evidence.logs', 'evidence.metrics', 'evidence.deploys']);
    expect(step(plan, 'evidence.logs').watches).toEqual(['logs:checkout-api']);
    expect(step(plan, 'diagnose')).toMatchObject({ target: 'agent:sre.diagnose', dependsOn: ['evidence'] });
    expect(step(plan, 'approve')).toMatchObject({ target: 'human:oncall.approve', dependsOn: ['diagnose'] });
    expect(step(plan, 'mitigate')).toMatchObject({ target: null, dependsOn: ['approve'] });
    for (const id of childrenOf(plan, 'mitigate')) {
      expect(step(plan, id).rollbackHint).toBeTruthy();
      expect(step(plan, id).when).toContain('$outputs.diagnose.action');
    }
    expect(step(plan, 'verify').dependsOn).toEqual(['mitigate']);
  });

  it('uses the service named in other phrasings', () => {
    const { plan } = planFor('Investigate elevated 5xx errors on payments-gateway.');
    expectValid(plan);
    expect(step(plan, 'evidence.metrics').input).toMatchObject({ service: 'payments-gateway' });
  });

  it('adapts to a catalog without deploy history or restarts', () => {
    const lean = catalogWithout(catalog, 'tool:deploys.list', 'tool:service.restart');
    const { plan } = planFor('triage the outage in search', {}, lean);
    expectValid(plan, lean);
    expect(childrenOf(plan, 'evidence')).toEqual(['evidence.logs', 'evidence.metrics']);
    expect(step(plan, 'mitigate').target).toBe('tool:deploy.rollback');
  });
});

describe('demo methods: release', () => {
  it('builds, verifies and drafts the changelog in parallel, then approves, deploys and smoke-checks', () => {
    const { plan } = planFor('Release version 2.4.0 of billing');
    expectValid(plan);
    expect(step(plan, 'build').input).toMatchObject({ service: 'billing', version: '2.4.0', ref: 'v2.4.0' });
    expect(childrenOf(plan, 'checks')).toEqual([
      'checks.unit-tests',
      'checks.integration-tests',
      'checks.security-scan',
    ]);
    expect(step(plan, 'checks').dependsOn).toEqual(['build']);
    expect(step(plan, 'changelog').dependsOn).toEqual(['build']);
    expect(step(plan, 'approve')).toMatchObject({
      target: 'human:release.approve',
      dependsOn: ['checks', 'changelog'],
    });
    expect(step(plan, 'deploy').rollbackHint).toBeTruthy();
    expect(step(plan, 'smoke').dependsOn).toEqual(['deploy']);
  });

  it('reads service and version in either order', () => {
    const { plan } = planFor('ship payments v3.1.0-rc.1.');
    expectValid(plan);
    expect(step(plan, 'build').input).toMatchObject({ service: 'payments', version: '3.1.0-rc.1' });
  });
});

describe('demo methods: fallback', () => {
  it('gathers material in parallel and writes a summary for an unrecognised objective', () => {
    const { plan, choices } = planFor('What changed in the EU AI Act this year?');
    expectValid(plan);
    expect(choices[0]?.method).toBe('research-and-summarize');
    expect(childrenOf(plan, 'gather')).toEqual(['gather.web', 'gather.kb']);
    expect(step(plan, 'summarize').dependsOn).toEqual(['gather']);
  });

  it('answers in one step when the limits leave no room for research', () => {
    const { plan } = planFor('Compile a competitor research report on Acme and Globex', { maxSteps: 1 });
    expectValid(plan, catalog, { maxSteps: 1 });
    expect(plan.steps.map((s) => s.target)).toEqual(['agent:report.writer']);
  });
});

describe('demo methods: every objective', () => {
  const objectives = fc
    .string({ minLength: 1, maxLength: 300, unit: 'grapheme' })
    .filter((s) => s.trim().length > 0 && s.length <= MAX_OBJECTIVE_LENGTH);
  const shaped = fc.oneof(
    objectives,
    objectives.map((s) => `compile a competitor research report on ${s}`),
    objectives.map((s) => `triage the incident in ${s}`),
    objectives.map((s) => `release version 1.2.3 of ${s}`),
  );

  it('plans a valid plan for random objectives', () => {
    fc.assert(
      fc.property(shaped, (objective) => {
        const result = validateGenerated(planFor(objective).plan, catalog);
        expect(result.valid ? [] : result.errors).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('recognises each kind of objective for any well-formed subject, service or version', () => {
    // Words the methods deliberately refuse as names ("in production", "and", "version") are not generated.
    const reserved = /^(?:and|vs|versus|the|production|prod|staging|service|system|our|into|version|release)$/;
    const name = fc.stringMatching(/^[a-z][a-z0-9]{2,10}(?:-[a-z0-9]{1,8})?$/).filter((s) => !reserved.test(s));
    const version = fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)).map((v) => v.join('.'));
    const cases = fc.oneof(
      fc.array(name, { minLength: 1, maxLength: 8 }).map((names) => ({
        objective: `Compile a competitor research report on ${names.join(', ')}`,
        method: 'competitor-report',
      })),
      name.map((service) => ({ objective: `Triage the incident in ${service}`, method: 'incident-triage' })),
      fc
        .tuple(name, version)
        .map(([service, v]) => ({ objective: `Release version ${v} of ${service}`, method: 'release' })),
    );
    fc.assert(
      fc.property(cases, ({ objective, method }) => {
        const { plan, choices } = planFor(objective);
        expect(choices[0]?.method).toBe(method);
        expectValid(plan);
      }),
      { numRuns: 150 },
    );
  });

  it('is deterministic: the same objective twice gives byte-identical JSON', () => {
    fc.assert(
      fc.property(shaped, (objective) => {
        expect(JSON.stringify(planFor(objective).plan)).toBe(JSON.stringify(planFor(objective).plan));
      }),
      { numRuns: 100 },
    );
  });

  it('is deterministic across model instances for every demo kind', async () => {
    for (const objective of [
      'Compile a competitor research report on Acme, Globex and Initech',
      'Triage the incident in checkout-api',
      'Release version 2.4.0 of billing',
      'Plan a team offsite',
    ]) {
      const first = await createHtnPlanModel().proposePlan(modelRequest(objective, catalog));
      const second = await createHtnPlanModel().proposePlan(modelRequest(objective, demoCatalog()));
      expect(JSON.stringify(first)).toBe(JSON.stringify(second));
    }
  });
});
