import { describe, expect, it } from 'vitest';
import { diagnoseFailure } from '../../../shared/engine/replan.ts';
import type { Plan, StepStatus } from '../../../shared/plan/schema.ts';
import { plannerErrorCode } from '../../../shared/planner/errors.ts';
import { createHtnPlanModel } from '../../../shared/planner/htn/model.ts';
import { buildPlanPrompt } from '../../../shared/planner/prompt.ts';
import { proposeRevision, type RevisionRequest } from '../../../shared/planner/replan/revise.ts';
import type { PlanModel, PlanModelRequest } from '../../../shared/ports/plan-model.ts';
import { demoCatalog, modelRequest } from './fixtures.ts';

const catalog = demoCatalog();
const OBJECTIVE = 'Compile a competitor research report on Acme, Globex and Initech';
const SEARCH = 'research.acme.search';
const rev1: Plan = createHtnPlanModel().decompose(modelRequest(OBJECTIVE, catalog)).plan;

const statusFor = (id: string): StepStatus => {
  if (id === SEARCH) return 'failed';
  if (id.startsWith('research.globex') || id === 'research.initech.search') return 'succeeded';
  if (id === 'research.acme.fetch' || id === 'research.acme.extract' || ['write', 'review', 'publish'].includes(id))
    return 'blocked';
  return 'running';
};
const records = rev1.steps
  .filter((s) => s.target !== null)
  .map((s) => ({
    stepId: s.id,
    status: statusFor(s.id),
    attempts: s.id === SEARCH ? 4 : 1,
    output:
      statusFor(s.id) === 'succeeded'
        ? { results: [{ url: `https://example.com/${s.id}`, body: 'x'.repeat(5000) }] }
        : undefined,
    error:
      s.id === SEARCH
        ? { code: 'E_CAPABILITY_UNAVAILABLE', message: 'search backend returned 503', retryable: true }
        : null,
  }));
const search = records.find((r) => r.stepId === SEARCH);
if (!search) throw new Error('no search record');
const request: RevisionRequest = {
  previous: rev1,
  records,
  diagnosis: diagnoseFailure({ plan: rev1, failed: search, states: new Map(records.map((r) => [r.stepId, r])) }),
};

/** A model without proposeReplan (like the Bedrock adapter) that records what it was asked. */
function fakeModel(answer: (request: PlanModelRequest) => unknown): PlanModel & { calls: PlanModelRequest[] } {
  const calls: PlanModelRequest[] = [];
  return {
    name: 'fake',
    calls,
    proposePlan: async (req) => {
      calls.push(req);
      return answer(req);
    },
  };
}

const swapSearch = (req: PlanModelRequest): unknown => ({
  ...req.previousPlan,
  revision: 99,
  steps: req.previousPlan?.steps.map((s) => (s.id === SEARCH ? { ...s, target: 'tool:web.search-backup' } : s)),
});

async function failure(promise: Promise<unknown>): Promise<{ code: string | undefined; error: unknown }> {
  try {
    await promise;
  } catch (error) {
    return { code: plannerErrorCode(error), error };
  }
  throw new Error('expected a rejection');
}

describe('proposeRevision', () => {
  it('replans with the HTN model into revision 2: finished outputs kept, the failed and blocked steps re-run', async () => {
    const outcome = await proposeRevision({ model: createHtnPlanModel(), catalog }, request);
    expect(outcome.model).toBe('htn');
    expect(outcome.change).toEqual({
      kind: 'substitute',
      stepId: SEARCH,
      from: 'tool:web.search',
      to: 'tool:web.search-backup',
    });
    expect(outcome.revision.revision).toBe(2);
    expect(outcome.added).toEqual([]);
    expect(outcome.removed).toEqual([]);
    expect(outcome.changed).toEqual([
      SEARCH,
      'research.acme.fetch',
      'research.acme.extract',
      'write',
      'review',
      'publish',
    ]);
    const globexFetch = outcome.revision.steps.find((s) => s.id === 'research.globex.fetch');
    expect(globexFetch).toMatchObject({
      status: 'succeeded',
      result: { results: [{ url: 'https://example.com/research.globex.fetch' }] },
    });
    expect(outcome.revision.steps.find((s) => s.id === SEARCH)).toMatchObject({
      target: 'tool:web.search-backup',
      status: 'pending',
    });
  });

  it('asks a model without proposeReplan through proposePlan with the statuses, bounded history, diagnosis and scope', async () => {
    const model = fakeModel(swapSearch);
    const outcome = await proposeRevision({ model, catalog }, request);
    const [asked] = model.calls;
    expect(asked?.previousPlan?.steps.find((s) => s.id === SEARCH)).toMatchObject({ status: 'failed', result: null });
    expect(asked?.previousPlan?.steps.every((s) => s.result === null)).toBe(true);
    expect(asked?.scope?.steps).toContain('publish');
    expect(asked?.scope?.steps).not.toContain('research.globex.search');
    expect(asked?.diagnosis).toMatchObject({ stepId: SEARCH, code: 'E_CAPABILITY_UNAVAILABLE', attempts: 4 });
    expect(asked?.history?.map((h) => h.stepId)).toContain('research.globex');
    expect(JSON.stringify(asked?.history).length).toBeLessThan(4000);
    // the model's revision and lifecycle fields are not trusted; the change is read from the plans
    expect(outcome.revision.revision).toBe(2);
    expect(outcome.change).toEqual({
      kind: 'substitute',
      stepId: SEARCH,
      from: 'tool:web.search',
      to: 'tool:web.search-backup',
    });
    expect(outcome.model).toBe('fake');
  });

  it('rejects a replan that edits a frozen step with E_REPLAN_REJECTED and the scope issues', async () => {
    const model = fakeModel((req) => {
      const plan = swapSearch(req) as Plan;
      return {
        ...plan,
        steps: plan.steps.map((s) => (s.id === 'research.globex.fetch' ? { ...s, title: 'Refetch' } : s)),
      };
    });
    const { code, error } = await failure(proposeRevision({ model, catalog }, request));
    expect(code).toBe('E_REPLAN_REJECTED');
    expect((error as { context: { issues: { code: string; stepId: string }[] } }).context.issues).toEqual([
      expect.objectContaining({ code: 'E_REPLAN_SCOPE', stepId: 'research.globex.fetch' }),
    ]);
  });

  it('rejects a replan that fails validation with E_INVALID_PLAN', async () => {
    const model = fakeModel((req) => {
      const plan = swapSearch(req) as Plan;
      return { ...plan, steps: plan.steps.map((s) => (s.id === SEARCH ? { ...s, target: 'tool:web.crawl' } : s)) };
    });
    expect((await failure(proposeRevision({ model, catalog }, request))).code).toBe('E_INVALID_PLAN');
  });

  it('passes E_NO_ALTERNATIVE on from the HTN model', async () => {
    const replans = [
      {
        revision: 2,
        stepId: SEARCH,
        target: 'tool:web.search-backup',
        code: 'E_X',
        change: { kind: 'substitute', stepId: SEARCH, from: 'tool:web.search-backup', to: 'tool:web.search' } as const,
      },
    ];
    const { code } = await failure(proposeRevision({ model: createHtnPlanModel(), catalog }, { ...request, replans }));
    expect(code).toBe('E_NO_ALTERNATIVE');
  });
});

describe('buildPlanPrompt for a replan', () => {
  it('carries the scope rule, the plan without run data, the diagnosis and the earlier replans', async () => {
    const model = fakeModel(swapSearch);
    await proposeRevision(
      { model, catalog },
      {
        ...request,
        replans: [
          {
            revision: 2,
            stepId: 'write',
            target: 'agent:report.writer',
            code: 'E_TIMEOUT',
            change: {
              kind: 'substitute',
              stepId: 'write',
              from: 'agent:report.writer',
              to: 'agent:report.writer-lite',
            },
          },
        ],
      },
    );
    const [asked] = model.calls;
    if (!asked) throw new Error('the model was not asked');
    const { user } = buildPlanPrompt(asked);
    expect(user).toContain('This is a replan of revision 1: answer with the whole plan as revision 2.');
    expect(user).toContain(
      `The steps you may change, replace or remove: research.acme, ${SEARCH}, research.acme.fetch`,
    );
    expect(user).toContain('Copy every other step exactly as it is');
    expect(user).toContain(
      `step ${SEARCH} (tool:web.search) failed with E_CAPABILITY_UNAVAILABLE: search backend returned 503`,
    );
    expect(user).toContain('Attempts: 4; the error is retryable.');
    expect(user).toContain(
      'Steps waiting for this replan: research.acme.fetch, research.acme.extract, write, review, publish',
    );
    expect(user).toContain('- research.globex [succeeded] Research Globex: all 3 steps finished');
    expect(user).toContain('- revision 2: step write (agent:report.writer) failed with E_TIMEOUT; write moved from');
    expect(user).not.toMatch(/"status":"|"result":null|"error":/);
    expect(user).not.toContain('x'.repeat(500));
  });

  it('adds nothing about replanning to a first plan', () => {
    expect(buildPlanPrompt(modelRequest(OBJECTIVE, catalog)).user).not.toMatch(/replan|Current plan/);
  });
});
