import { beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createHandler, MAX_REPORTED_ISSUES } from '../../../functions/validator.ts';
import { isNotFoundError } from '../../../shared/errors.ts';
import { loadCatalog } from '../../../shared/plan/catalog.ts';
import { stampPlan } from '../../../shared/plan/stamp.ts';
import { startTestStore, tableItems } from '../../support/dynalite.ts';
import { catalog, echoStep, planOf, runRecord } from '../api/harness.ts';

const counted = vi.hoisted(() => ({ validations: 0 }));

vi.mock('../../../shared/plan/validate.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../shared/plan/validate.ts')>();
  return {
    ...actual,
    validateGenerated: (...args: Parameters<typeof actual.validateGenerated>) => {
      counted.validations += 1;
      return actual.validateGenerated(...args);
    },
  };
});

beforeEach(() => {
  counted.validations = 0;
});

/** The handler on the DynamoDB store adapter over a fresh dynalite table, dropped after the test. */
async function setup(limits = { maxSteps: 8, maxDepth: 4 }) {
  const tested = await startTestStore();
  onTestFinished(() => tested.stop());
  const { store } = tested;
  return { store, items: () => tableItems(tested.dynamo), handler: createHandler({ store, catalog, limits }) };
}

describe('validator task (ValidatePlan)', () => {
  it('answers valid for a good candidate and stores nothing', async () => {
    const { store, items, handler } = await setup();
    await store.createRun(runRecord('r', { status: 'planning', revision: 0, candidatePlan: planOf([echoStep('a')]) }));
    const before = await items();
    expect(await handler({ runId: 'r' })).toEqual({ valid: true, errors: [] });
    // Every item as it was: the run unchanged, no plan revision, nothing else written.
    expect(await items()).toEqual(before);
    expect(before.map((item) => item.SK?.S)).toEqual(['RUN']);
  });

  it('validates as untrusted: lifecycle data is refused', async () => {
    const { store, handler } = await setup();
    const candidate = planOf([echoStep('a', { status: 'succeeded', result: { value: 'x' } })]);
    await store.createRun(runRecord('r', { status: 'planning', revision: 0, candidatePlan: candidate }));
    const answer = await handler({ runId: 'r' });
    expect(answer.valid).toBe(false);
    expect(answer.errors.map((e) => e.code)).toContain('E_NOT_PENDING');
  });

  it('applies the configured limits', async () => {
    const { store, handler } = await setup({ maxSteps: 1, maxDepth: 4 });
    await store.createRun(runRecord('r', { candidatePlan: planOf([echoStep('a'), echoStep('b')]) }));
    expect((await handler({ runId: 'r' })).errors.map((e) => e.code)).toContain('E_TOO_MANY_STEPS');
  });

  it('answers invalid when there is no candidate', async () => {
    const { store, handler } = await setup();
    await store.createRun(runRecord('r', { status: 'planning', revision: 0 }));
    const answer = await handler({ runId: 'r' });
    expect(answer.valid).toBe(false);
    expect(answer.errors).toHaveLength(1);
  });

  it('caps the issues it reports so the answer fits a Step Functions payload', async () => {
    const { store, handler } = await setup({ maxSteps: 1000, maxDepth: 1000 });
    const steps = Array.from({ length: 150 }, (_, i) => echoStep(`s${i}`, { target: 'tool:nope' }));
    await store.createRun(runRecord('r', { candidatePlan: planOf(steps) }));
    const answer = await handler({ runId: 'r' });
    expect(answer.errors).toHaveLength(MAX_REPORTED_ISSUES + 1);
    expect(answer.errors.at(-1)?.code).toBe('E_MORE_ISSUES');
    expect(answer.totalErrors).toBeGreaterThanOrEqual(150);
    expect(JSON.stringify(answer).length).toBeLessThan(256 * 1024);
  });

  it('fails with NotFoundError for an unknown run', async () => {
    const { handler } = await setup();
    expect(isNotFoundError(await handler({ runId: 'nope' }).catch((e: unknown) => e))).toBe(true);
  });

  it('takes a submitted plan as the candidate when PlanRun left it where it is', async () => {
    const { store, handler } = await setup({ maxSteps: 1, maxDepth: 4 });
    const submittedPlan = planOf([echoStep('a'), echoStep('b')]);
    await store.createRun(runRecord('r', { status: 'planning', revision: 0, mode: 'SUBMITTED', submittedPlan }));
    const answer = await handler({ runId: 'r' });
    expect(counted.validations).toBe(1);
    expect(answer.errors.map((e) => e.code)).toContain('E_TOO_MANY_STEPS');
  });

  describe('with a validation stamp', () => {
    const limits = { maxSteps: 8, maxDepth: 4 };
    const candidate = planOf([echoStep('a'), echoStep('b', { dependsOn: ['a'] })]);

    it('answers valid without validating again when the stamp is of this plan, catalog and limits', async () => {
      const { store, handler } = await setup(limits);
      const planStamp = stampPlan(candidate, catalog, limits);
      await store.createRun(runRecord('r', { status: 'planning', revision: 0, candidatePlan: candidate, planStamp }));
      expect(await handler({ runId: 'r' })).toEqual({ valid: true, errors: [] });
      expect(counted.validations).toBe(0);
    });

    it('answers valid without validating again for a stamped submitted plan', async () => {
      const { store, handler } = await setup(limits);
      const planStamp = stampPlan(candidate, catalog, limits);
      await store.createRun(
        runRecord('r', { status: 'planning', revision: 0, mode: 'SUBMITTED', submittedPlan: candidate, planStamp }),
      );
      expect(await handler({ runId: 'r' })).toEqual({ valid: true, errors: [] });
      expect(counted.validations).toBe(0);
    });

    it('validates again when the plan was stamped against another catalog', async () => {
      const { store, handler } = await setup(limits);
      const other = loadCatalog({
        capabilities: [...catalog.capabilities(), { ...echoCapability(), target: 'tool:x' }],
      });
      const planned = planOf([echoStep('a', { target: 'tool:x' })]);
      const planStamp = stampPlan(planned, other, limits);
      await store.createRun(runRecord('r', { status: 'planning', revision: 0, candidatePlan: planned, planStamp }));
      const answer = await handler({ runId: 'r' });
      expect(counted.validations).toBe(1);
      expect(answer.valid).toBe(false);
      expect(answer.errors.map((e) => e.code)).toEqual(['E_UNKNOWN_TARGET']);
    });

    it('validates again when the plan was stamped under other limits', async () => {
      const { store, handler } = await setup({ maxSteps: 1, maxDepth: 4 });
      const planStamp = stampPlan(candidate, catalog, limits);
      await store.createRun(runRecord('r', { status: 'planning', revision: 0, candidatePlan: candidate, planStamp }));
      const answer = await handler({ runId: 'r' });
      expect(counted.validations).toBe(1);
      expect(answer.errors.map((e) => e.code)).toContain('E_TOO_MANY_STEPS');
    });

    it('validates again when the stamp is of another plan', async () => {
      const { store, handler } = await setup(limits);
      const planStamp = stampPlan(planOf([echoStep('a')]), catalog, limits);
      const changed = planOf([echoStep('a', { status: 'succeeded' })]);
      await store.createRun(runRecord('r', { status: 'planning', revision: 0, candidatePlan: changed, planStamp }));
      const answer = await handler({ runId: 'r' });
      expect(counted.validations).toBe(1);
      expect(answer.errors.map((e) => e.code)).toContain('E_NOT_PENDING');
    });
  });
});

function echoCapability() {
  const echo = catalog.get('tool:echo');
  if (!echo) throw new Error('the harness catalog has no tool:echo');
  return echo;
}
