import { describe, expect, it } from 'vitest';
import { checkReplan, diffPlans, pendingPlan, replanScope, stripLifecycle } from '../../../shared/engine/replan.ts';
import { type Catalog, loadCatalog } from '../../../shared/plan/catalog.ts';
import type { Plan, StepStatus } from '../../../shared/plan/schema.ts';
import { validateGenerated } from '../../../shared/plan/validate.ts';
import { plannerErrorCode } from '../../../shared/planner/errors.ts';
import { createHtnPlanModel } from '../../../shared/planner/htn/model.ts';
import { compound, type Method, primitive, ROOT_TASK } from '../../../shared/planner/htn/types.ts';
import { htnReplan } from '../../../shared/planner/replan/htn-replan.ts';
import type { PlanModelRequest, PriorReplan } from '../../../shared/ports/plan-model.ts';
import { capability, demoCatalog, modelRequest } from './fixtures.ts';

const OBJECTIVE = 'Compile a competitor research report on Acme, Globex and Initech';
const SEARCH = 'research.acme.search';
const FETCH = 'research.acme.fetch';

/** The plan with each step's status set as a run left it (what the planner hands the model). */
const annotated = (plan: Plan, statuses: Record<string, StepStatus>): Plan => ({
  ...plan,
  steps: plan.steps.map((s) => ({ ...s, status: statuses[s.id] ?? 'pending', result: null, error: null })),
});

function firstPlan(catalog: Catalog = demoCatalog()): Plan {
  return createHtnPlanModel().decompose(modelRequest(OBJECTIVE, catalog)).plan;
}

function replanRequest(
  previousPlan: Plan,
  stepId: string,
  target: string,
  catalog: Catalog = demoCatalog(),
  replans: PriorReplan[] = [],
): PlanModelRequest {
  return {
    ...modelRequest(OBJECTIVE, catalog),
    previousPlan,
    diagnosis: { stepId, code: 'E_CAPABILITY_UNAVAILABLE', message: 'search backend returned 503', target },
    replans,
  };
}

const expectAcceptable = (previous: Plan, next: Plan, failed: string, catalog: Catalog = demoCatalog()): void => {
  const result = validateGenerated(stripLifecycle(next), catalog);
  expect(result.valid ? [] : result.errors).toEqual([]);
  const states = new Map(previous.steps.flatMap((s) => (s.status ? [[s.id, s.status] as const] : [])));
  expect(checkReplan(previous, next, replanScope(previous, [failed]), states)).toEqual([]);
};

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    return plannerErrorCode(error);
  }
  return undefined;
};

describe('htnReplan: the demo research plan', () => {
  const rev1 = annotated(firstPlan(), { 'research.globex.search': 'succeeded', [SEARCH]: 'failed' });

  it('substitutes the backup search target for the failed search and changes nothing else', () => {
    const { plan, change, replaces } = htnReplan(replanRequest(rev1, SEARCH, 'tool:web.search'));
    expect(change).toEqual({
      kind: 'substitute',
      stepId: SEARCH,
      from: 'tool:web.search',
      to: 'tool:web.search-backup',
    });
    expect(replaces).toEqual({});
    expect(plan.revision).toBe(2);
    const diff = diffPlans(rev1, plan);
    expect(diff).toMatchObject({ added: [], removed: [], changed: [{ id: SEARCH, fields: ['target'] }] });
    // every other step, upstream, downstream and unrelated, is the previous step verbatim
    const before = new Map(pendingPlan(rev1).steps.map((s) => [s.id, s]));
    for (const s of plan.steps) if (s.id !== SEARCH) expect(s).toEqual(before.get(s.id));
    expect(plan.steps.find((s) => s.id === 'research.globex.search')?.target).toBe('tool:web.search');
    expectAcceptable(rev1, plan, SEARCH);
  });

  it('gives up with E_NO_ALTERNATIVE when the substituted search fails too and nothing untried is left', () => {
    const { plan: rev2, change } = htnReplan(replanRequest(rev1, SEARCH, 'tool:web.search'));
    const prior: PriorReplan = { revision: 2, stepId: SEARCH, target: 'tool:web.search', code: 'E_X', change };
    const request = replanRequest(
      annotated(rev2, { [SEARCH]: 'failed' }),
      SEARCH,
      'tool:web.search-backup',
      demoCatalog(),
      [prior],
    );
    // the other research method keeps the search step, and both search targets have failed there
    expect(codeOf(() => htnReplan(request))).toBe('E_NO_ALTERNATIVE');
  });

  it('moves on to the next untried alternative when the catalog has one', () => {
    const document = structuredClone(demoCatalog().capabilities());
    const search = document.find((c) => c.target === 'tool:web.search');
    if (!search) throw new Error('demo catalog without tool:web.search');
    search.alternatives = ['tool:web.search-backup', 'tool:web.search-mirror'];
    const catalog = loadCatalog({
      capabilities: [...document, { ...search, target: 'tool:web.search-mirror', alternatives: ['tool:web.search'] }],
    });
    const rev1b = annotated(firstPlan(catalog), { [SEARCH]: 'failed' });
    const first = htnReplan(replanRequest(rev1b, SEARCH, 'tool:web.search', catalog));
    expect(first.change).toMatchObject({ to: 'tool:web.search-backup' });
    const prior: PriorReplan = {
      revision: 2,
      stepId: SEARCH,
      target: 'tool:web.search',
      code: 'E_X',
      change: first.change,
    };
    const second = htnReplan(
      replanRequest(annotated(first.plan, { [SEARCH]: 'failed' }), SEARCH, 'tool:web.search-backup', catalog, [prior]),
    );
    expect(second.change).toEqual({
      kind: 'substitute',
      stepId: SEARCH,
      from: 'tool:web.search-backup',
      to: 'tool:web.search-mirror',
    });
    expect(second.plan.revision).toBe(3);
    expectAcceptable(first.plan, second.plan, SEARCH, catalog);
  });

  it('switches the branch to the snippets method when both fetch targets failed, keeping the finished search', () => {
    const start = annotated(firstPlan(), { [SEARCH]: 'succeeded', [FETCH]: 'failed' });
    const first = htnReplan(replanRequest(start, FETCH, 'tool:web.fetch'));
    expect(first.change).toMatchObject({ kind: 'substitute', to: 'tool:web.fetch-archive' });
    const prior: PriorReplan = {
      revision: 2,
      stepId: FETCH,
      target: 'tool:web.fetch',
      code: 'E_X',
      change: first.change,
    };
    const rev2 = annotated(first.plan, { [SEARCH]: 'succeeded', [FETCH]: 'failed' });
    const second = htnReplan(replanRequest(rev2, FETCH, 'tool:web.fetch-archive', demoCatalog(), [prior]));
    expect(second.change).toEqual({
      kind: 'method',
      path: 'research.acme',
      task: 'research-subject',
      from: 'search-fetch-extract',
      to: 'search-snippets-extract',
    });
    const diff = diffPlans(rev2, second.plan);
    expect(diff.removed).toEqual([FETCH]);
    expect(diff.added).toEqual([]);
    expect(diff.changed.map((c) => c.id)).toEqual(['research.acme.extract']);
    expect(second.plan.steps.find((s) => s.id === 'research.acme.extract')?.dependsOn).toEqual([SEARCH]);
    expectAcceptable(rev2, second.plan, FETCH);
  });

  it('gives each revision its own rationale: the failure it answers and what it changed, and why', () => {
    const start = annotated(firstPlan(), { [SEARCH]: 'succeeded', [FETCH]: 'failed' });
    expect(start.rationale).toContain('objective: method competitor-report, because');
    const first = htnReplan(replanRequest(start, FETCH, 'tool:web.fetch'));
    expect(first.plan.rationale).toBe(
      `HTN replan: step ${FETCH} (tool:web.fetch) failed with E_CAPABILITY_UNAVAILABLE; substituted ` +
        'tool:web.fetch-archive for it: a catalog alternative of tool:web.fetch with the same contracts that this ' +
        'step has not tried; nothing else changes.',
    );
    const prior: PriorReplan = {
      revision: 2,
      stepId: FETCH,
      target: 'tool:web.fetch',
      code: 'E_X',
      change: first.change,
    };
    const rev2 = annotated(first.plan, { [SEARCH]: 'succeeded', [FETCH]: 'failed' });
    const second = htnReplan(replanRequest(rev2, FETCH, 'tool:web.fetch-archive', demoCatalog(), [prior]));
    expect(second.plan.rationale).toMatch(
      /^HTN replan: step research\.acme\.fetch \(tool:web\.fetch-archive\) failed with E_CAPABILITY_UNAVAILABLE; research\.acme \(research-subject\) is decomposed by method search-snippets-extract instead of search-fetch-extract, because .*passed over: search-fetch-extract \(excluded by a replan\)/,
    );
  });

  it('is deterministic: the same request gives a byte-identical plan', () => {
    const request = replanRequest(rev1, SEARCH, 'tool:web.search');
    const a = JSON.stringify(htnReplan(request));
    const b = JSON.stringify(htnReplan(replanRequest(structuredClone(rev1), SEARCH, 'tool:web.search')));
    expect(a).toBe(b);
  });

  it('rejects a request without a diagnosis or with a step the plan does not have', () => {
    expect(codeOf(() => htnReplan({ ...modelRequest(OBJECTIVE, demoCatalog()), previousPlan: rev1 }))).toBe(
      'E_REPLAN_REQUEST',
    );
    expect(codeOf(() => htnReplan(replanRequest(rev1, 'research', 'tool:web.search')))).toBe('E_REPLAN_REQUEST');
  });
});

describe('htnReplan: another method', () => {
  const catalog = loadCatalog({
    capabilities: [
      capability('tool:download'),
      capability('tool:parse'),
      capability('tool:query'),
      capability('tool:use'),
    ],
  });
  // objective → get (download → parse | query → shape) → use
  const methods: Method[] = [
    {
      name: 'pipeline',
      task: ROOT_TASK,
      expand: () => [
        compound({ key: 'get', task: 'get-data', title: 'Get the data' }),
        primitive({ key: 'use', title: 'Use it', target: 'tool:use', after: ['get'] }),
      ],
    },
    {
      name: 'download',
      task: 'get-data',
      expand: () => [
        primitive({ key: 'download', title: 'Download', target: 'tool:download' }),
        primitive({ key: 'parse', title: 'Parse', target: 'tool:parse', after: ['download'] }),
      ],
    },
    {
      name: 'query',
      task: 'get-data',
      expand: () => [
        primitive({ key: 'query', title: 'Query', target: 'tool:query' }),
        primitive({ key: 'shape', title: 'Shape', target: 'tool:parse', after: ['query'] }),
      ],
    },
  ];
  const model = createHtnPlanModel({ methods });
  const base = model.decompose(modelRequest('get and use the data', catalog)).plan;
  const request = (previousPlan: Plan, stepId: string): PlanModelRequest => ({
    ...modelRequest('get and use the data', catalog),
    previousPlan,
    diagnosis: {
      stepId,
      code: 'E_HTTP',
      message: 'not found',
      target: previousPlan.steps.find((s) => s.id === stepId)?.target ?? '',
    },
  });

  it('uses the next method of the containing task and records which new steps take over the failed one', async () => {
    const previous = annotated(base, { 'get.download': 'failed' });
    const proposal = await model.proposeReplan(request(previous, 'get.download'));
    expect(proposal.change).toEqual({ kind: 'method', path: 'get', task: 'get-data', from: 'download', to: 'query' });
    expect(proposal.replaces).toEqual({ 'get.query': 'get.download', 'get.shape': 'get.download' });
    const plan = proposal.plan as Plan;
    expect(plan.steps.map((s) => s.id)).toEqual(['get', 'get.query', 'get.shape', 'use']);
    expectAcceptable(previous, plan, 'get.download', catalog);
    expect(await model.proposePlan(request(previous, 'get.download'))).toEqual(plan);
  });

  it('passes over a method that would drop a step outside the scope, and gives up when none is left', () => {
    const previous = annotated(base, { 'get.download': 'succeeded', 'get.parse': 'failed' });
    expect(codeOf(() => model.replan(request(previous, 'get.parse')))).toBe('E_NO_ALTERNATIVE');
  });
});

describe('htnReplan of a person’s request', () => {
  const finishedAll = (plan: Plan): Plan =>
    annotated(plan, Object.fromEntries(plan.steps.filter((s) => s.target !== null).map((s) => [s.id, 'succeeded'])));

  it('refuses a reason alone with E_NO_CHANGE: the method library reads no free text', () => {
    const previous = finishedAll(firstPlan());
    const request = {
      ...modelRequest(OBJECTIVE, demoCatalog()),
      previousPlan: previous,
      requested: { reason: 'more' },
    };

    expect(codeOf(() => htnReplan(request))).toBe('E_NO_CHANGE');
  });

  it('decomposes a new objective, keeping the ids (and so the outputs) of the branches it shares', () => {
    const previous = finishedAll(firstPlan());
    const objective = 'Compile a competitor research report on Acme, Globex, Initech and Hooli';
    const request: PlanModelRequest = {
      ...modelRequest(objective, demoCatalog()),
      previousPlan: previous,
      requested: { reason: 'Hooli too', objective },
    };

    const { plan } = htnReplan(request);

    const diff = diffPlans(previous, plan);
    expect(plan.objective).toBe(objective);
    expect(diff.added).toContain('research.hooli.search');
    expect(diff.removed).toEqual([]);
    const search = (p: Plan) => stripLifecycle(p).steps.find((s) => s.id === SEARCH);
    expect(search(plan)).toEqual(search(previous));
  });
});
