import { describe, expect, it } from 'vitest';
import { isPlannerError, ModelError } from '../../../shared/errors.ts';
import type { Plan } from '../../../shared/plan/schema.ts';
import { MAX_RATIONALE_LENGTH, planJsonSchema } from '../../../shared/plan/schema.ts';
import { isStamped } from '../../../shared/plan/stamp.ts';
import { DEFAULT_LIMITS, validateGenerated } from '../../../shared/plan/validate.ts';
import { plannerErrorCode } from '../../../shared/planner/errors.ts';
import { createHtnPlanModel } from '../../../shared/planner/htn/model.ts';
import { createPlanner, type PlanRequest, resolveMode } from '../../../shared/planner/planner.ts';
import { buildPlanPrompt } from '../../../shared/planner/prompt.ts';
import type { PlanModel, PlanModelRequest } from '../../../shared/ports/plan-model.ts';
import { demoCatalog } from './fixtures.ts';

const catalog = demoCatalog();

/** A model that answers with a fixed value and records what it was asked. */
function fakeModel(answer: (request: PlanModelRequest) => unknown): PlanModel & { calls: PlanModelRequest[] } {
  const calls: PlanModelRequest[] = [];
  return {
    name: 'fake',
    calls,
    proposePlan: async (request) => {
      calls.push(request);
      return answer(request);
    },
  };
}

const htnPlan = async (objective: string): Promise<Plan> =>
  (await createHtnPlanModel().proposePlan({
    objective,
    catalog: catalog.capabilities(),
    planSchema: planJsonSchema(),
    limits: DEFAULT_LIMITS,
  })) as Plan;

async function rejection(promise: Promise<unknown>): Promise<{ code: string | undefined; error: unknown }> {
  try {
    await promise;
  } catch (error) {
    return { code: plannerErrorCode(error), error };
  }
  throw new Error('expected a rejection');
}

describe('createPlanner: DIRECT', () => {
  it('builds one pending step for the target with its catalog contracts and never calls the model', async () => {
    const model = fakeModel(() => ({}));
    const plan = await createPlanner({ model, catalog }).plan({
      objective: 'rank results',
      directTarget: 'tool:web.search',
    });
    expect(model.calls).toEqual([]);
    expect(plan).toMatchObject({ schemaVersion: 1, revision: 1, objective: 'rank results' });
    expect(plan.steps).toHaveLength(1);
    expect(plan.steps[0]).toMatchObject({
      id: 'web.search',
      target: 'tool:web.search',
      dependsOn: [],
      status: 'pending',
      result: null,
      error: null,
      inputSchema: catalog.get('tool:web.search')?.inputSchema,
      outputSchema: catalog.get('tool:web.search')?.outputSchema,
    });
    expect(validateGenerated(plan, catalog).valid).toBe(true);
  });

  it('takes the mode from the request when it is given explicitly', async () => {
    const plan = await createPlanner({ model: fakeModel(() => ({})), catalog }).plan({
      objective: 'publish it',
      mode: 'DIRECT',
      directTarget: 'tool:docs.publish',
    });
    expect(plan.steps[0]?.rollbackHint).toBeTruthy();
    expect(plan.steps[0]?.input).toBeUndefined();
  });

  it('gives a human target a bounded approval question', async () => {
    const plan = await createPlanner({ model: fakeModel(() => ({})), catalog }).plan({
      objective: 'Is this ready?',
      directTarget: 'human:editor.review',
    });
    expect(plan.steps[0]?.approval).toEqual({ question: 'Is this ready?', timeoutSeconds: 86_400 });
  });

  it('uses the caller input after checking it against the contract', async () => {
    const planner = createPlanner({ model: fakeModel(() => ({})), catalog });
    const plan = await planner.plan({ objective: 'o', directTarget: 'tool:web.search', input: { query: 'rust' } });
    expect(plan.steps[0]?.input).toEqual({ query: 'rust' });
    const bad = await rejection(planner.plan({ objective: 'o', directTarget: 'tool:web.search', input: { q: 1 } }));
    expect(bad.code).toBe('E_INPUT');
  });
});

describe('createPlanner: DECOMPOSE', () => {
  it('asks the model with the objective, the catalog, the plan schema and the limits, and returns its valid plan', async () => {
    const proposed = await htnPlan('Release version 1.0.0 of api');
    const model = fakeModel(() => proposed);
    const plan = await createPlanner({ model, catalog, limits: { maxSteps: 30 } }).plan({
      objective: 'Release version 1.0.0 of api',
    });
    expect(plan).toEqual(proposed);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]).toMatchObject({
      objective: 'Release version 1.0.0 of api',
      planSchema: planJsonSchema(),
      limits: { maxSteps: 30, maxDepth: DEFAULT_LIMITS.maxDepth },
    });
    expect(model.calls[0]?.catalog.map((c) => c.target)).toEqual(catalog.targets());
  });

  it('rejects an invalid model plan with a PlannerError carrying every issue, never returning it', async () => {
    const proposed = await htnPlan('Triage the incident in api');
    const broken = {
      ...proposed,
      steps: [...proposed.steps.slice(1), { ...proposed.steps[0], dependsOn: ['ghost'] }].map((s) =>
        s.target === 'tool:deploy.rollback' ? { ...s, target: 'tool:nope' } : s,
      ),
    };
    const { code, error } = await rejection(
      createPlanner({ model: fakeModel(() => broken), catalog }).plan({ objective: 'Triage the incident in api' }),
    );
    expect(code).toBe('E_INVALID_PLAN');
    expect(isPlannerError(error) && error.retryable).toBe(false);
    const issues = isPlannerError(error) ? (error.context.issues as { code: string }[]) : [];
    expect(issues.map((i) => i.code)).toEqual(expect.arrayContaining(['E_UNKNOWN_DEPENDENCY', 'E_UNKNOWN_TARGET']));
  });

  it('rejects model output that is not a plan at all, or that carries executor lifecycle data', async () => {
    const proposed = await htnPlan('anything');
    for (const answer of [
      null,
      'a plan',
      [],
      { steps: [] },
      { ...proposed, steps: [{ ...proposed.steps[1], status: 'succeeded' }] },
    ]) {
      const { code } = await rejection(
        createPlanner({ model: fakeModel(() => answer), catalog }).plan({ objective: 'anything' }),
      );
      expect(code).toBe('E_INVALID_PLAN');
    }
  });

  it('rejects a plan over the configured limits', async () => {
    const proposed = await htnPlan('Compile a competitor research report on Acme and Globex');
    const { code, error } = await rejection(
      createPlanner({ model: fakeModel(() => proposed), catalog, limits: { maxSteps: 5 } }).plan({
        objective: 'Compile a competitor research report on Acme and Globex',
      }),
    );
    expect(code).toBe('E_INVALID_PLAN');
    expect(isPlannerError(error) && JSON.stringify(error.context.issues)).toContain('E_TOO_MANY_STEPS');
  });

  it('sets the application-owned revision and objective on the model plan', async () => {
    const proposed = await htnPlan('plan the offsite');
    const plan = await createPlanner({
      model: fakeModel(() => ({ ...proposed, revision: 7, objective: 'something else' })),
      catalog,
    }).plan({ objective: 'plan the offsite' });
    expect(plan).toMatchObject({ revision: 1, objective: 'plan the offsite' });
  });

  it("keeps the model's rationale, clipped to its bound, and tolerates one that is absent or not a string", async () => {
    const proposed = await htnPlan('plan the offsite');
    const { rationale: _htn, ...bare } = proposed;
    const planWith = (rationale: unknown) =>
      createPlanner({ model: fakeModel(() => ({ ...bare, rationale })), catalog }).plan({
        objective: 'plan the offsite',
      });
    expect((await planWith('  Web and KB   first, then a summary. ')).rationale).toBe(
      'Web and KB first, then a summary.',
    );
    const long = await planWith('why '.repeat(1000));
    expect(long.rationale).toHaveLength(MAX_RATIONALE_LENGTH);
    expect(long.rationale?.endsWith('…')).toBe(true);
    expect((await planWith(42)).rationale).toBeUndefined();
    expect((await planWith('   ')).rationale).toBeUndefined();
    const absent = await createPlanner({ model: fakeModel(() => bare), catalog }).plan({
      objective: 'plan the offsite',
    });
    expect(absent.rationale).toBeUndefined();
  });

  it('asks the model for a rationale: the answer schema has the field and the brief says what it is for', async () => {
    const model = fakeModel(() => htnPlan('plan the offsite'));
    await createPlanner({ model, catalog }).plan({ objective: 'plan the offsite' });
    const schema = model.calls[0]?.planSchema as { properties: Record<string, { maxLength?: number }> };
    expect(schema.properties.rationale?.maxLength).toBe(MAX_RATIONALE_LENGTH);
    expect(buildPlanPrompt(model.calls[0] as PlanModelRequest).system).toContain('rationale:');
  });

  it('lets a model failure propagate as it is', async () => {
    const failure = new ModelError('throttled', { retryable: true });
    const model: PlanModel = { name: 'down', proposePlan: () => Promise.reject(failure) };
    await expect(createPlanner({ model, catalog }).plan({ objective: 'x' })).rejects.toBe(failure);
  });

  it('plans with the embedded HTN model end to end', async () => {
    const plan = await createPlanner({ model: createHtnPlanModel(), catalog }).plan({
      objective: 'Compile a competitor research report on Acme and Globex',
    });
    expect(plan.steps.some((s) => s.target === 'human:editor.review')).toBe(true);
  });
});

describe('createPlanner: bad requests', () => {
  const cases: [string, PlanRequest, string][] = [
    ['DIRECT without a target', { objective: 'o', mode: 'DIRECT' }, 'E_MODE'],
    ['DECOMPOSE with a target', { objective: 'o', mode: 'DECOMPOSE', directTarget: 'tool:web.search' }, 'E_MODE'],
    ['an unknown mode', { objective: 'o', mode: 'AUTO' as 'DIRECT' }, 'E_MODE'],
    ['an empty directTarget', { objective: 'o', directTarget: '' }, 'E_MODE'],
    ['an input without DIRECT', { objective: 'o', input: { query: 'x' } }, 'E_MODE'],
    ['an unknown target', { objective: 'o', directTarget: 'tool:missing' }, 'E_UNKNOWN_TARGET'],
    [
      'an unknown target in explicit DIRECT',
      { objective: 'o', mode: 'DIRECT', directTarget: 'agent:x' },
      'E_UNKNOWN_TARGET',
    ],
    ['a blank objective', { objective: '  \n ' }, 'E_OBJECTIVE'],
    ['an objective over 4000 characters', { objective: 'x'.repeat(4001) }, 'E_OBJECTIVE'],
    ['a non-string objective', { objective: 42 as unknown as string }, 'E_OBJECTIVE'],
  ];

  it.each(cases)('rejects %s with a stable code and calls no model', async (_name, request, expected) => {
    const model = fakeModel(() => ({}));
    const { code, error } = await rejection(createPlanner({ model, catalog }).plan(request));
    expect(code).toBe(expected);
    expect((error as Error).message.length).toBeGreaterThan(10);
    expect(model.calls).toEqual([]);
  });
});

describe('resolveMode', () => {
  it('defaults to DIRECT with a target and to DECOMPOSE without one', () => {
    expect(resolveMode({ objective: 'o', directTarget: 'tool:kb.search' }, catalog)).toEqual({
      mode: 'DIRECT',
      target: 'tool:kb.search',
    });
    expect(resolveMode({ objective: 'o' }, catalog)).toEqual({ mode: 'DECOMPOSE' });
  });
});

describe('createPlanner: validation stamps', () => {
  it('stamps the plans it validated and returned, and nothing else', async () => {
    const limits = { ...DEFAULT_LIMITS, maxSteps: 30 };
    const planner = createPlanner({ model: createHtnPlanModel(), catalog, limits });
    const plan = await planner.plan({ objective: 'Triage the incident in checkout-api' });
    const stamp = planner.stamp(plan);
    expect(isStamped(stamp, plan, catalog, limits)).toBe(true);
    expect(isStamped(stamp, JSON.parse(JSON.stringify(plan)), catalog, limits)).toBe(true);
    expect(isStamped(stamp, plan, catalog, DEFAULT_LIMITS)).toBe(false);
    expect(planner.stamp(structuredClone(plan))).toBeUndefined();
  });

  it('keeps the stamp of the plan as it was validated: a plan changed since does not match it', async () => {
    const planner = createPlanner({ model: createHtnPlanModel(), catalog, limits: { maxSteps: 30 } });
    const plan = await planner.plan({ objective: 'Triage the incident in checkout-api' });
    const stamp = planner.stamp(plan);
    (plan.steps[0] as { title: string }).title = 'changed after validation';
    expect(planner.stamp(plan)).toBe(stamp);
    expect(isStamped(stamp, plan, catalog, planner.limits)).toBe(false);
  });
});
