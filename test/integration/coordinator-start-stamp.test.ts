/**
 * StartRun and the validation stamp: a candidate whose stamp matches the coordinator's catalog and limits is taken
 * as revision 1 without a second validation; any other candidate is validated in full, as before.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { loadCatalog } from '../../shared/plan/catalog.ts';
import type { Plan } from '../../shared/plan/schema.ts';
import { stampPlan } from '../../shared/plan/stamp.ts';
import {
  type Harness,
  planOf,
  step,
  TEST_CATALOG,
  TEST_CONFIG,
  useCoordinatorHarness,
} from '../support/coordinator-harness.ts';
import { at, uniqueId } from '../support/store-fixtures.ts';

const counted = vi.hoisted(() => ({ validations: 0 }));

vi.mock('../../shared/plan/validate.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../shared/plan/validate.ts')>();
  return {
    ...actual,
    validate: (...args: Parameters<typeof actual.validate>) => {
      counted.validations += 1;
      return actual.validate(...args);
    },
  };
});

const harness = useCoordinatorHarness();
const LIMITS = { maxSteps: TEST_CONFIG.maxSteps, maxDepth: TEST_CONFIG.maxDepth };

beforeEach(() => {
  counted.validations = 0;
});

/** A run in `planning` with a submitted plan and the stamp the API would have stored. */
async function stampedRun(h: Harness, plan: Plan, planStamp: string): Promise<string> {
  const runId = uniqueId('run');
  await h.store.createRun({
    runId,
    status: 'planning',
    objective: plan.objective,
    mode: 'SUBMITTED',
    submittedPlan: plan,
    candidatePlan: plan,
    planStamp,
    revision: 0,
    createdAt: at(0),
    updatedAt: at(0),
    replans: 0,
  });
  return runId;
}

describe('coordinator: StartRun and the validation stamp', () => {
  it('starts a stamped plan as revision 1 without validating it again, and drops the stamp with the plan', async () => {
    const h = harness();
    const plan = { ...planOf([step('a'), step('b', ['a'])]), revision: 4 };
    const runId = await stampedRun(h, plan, stampPlan(plan, TEST_CATALOG, LIMITS));
    await h.coordinator.startRun({ runId });
    expect(counted.validations).toBe(0);
    expect((await h.store.getPlanRevision(runId, 1))?.plan).toEqual({ ...plan, revision: 1 });
    const run = await h.store.getRun(runId);
    expect(run).toMatchObject({ status: 'running', revision: 1 });
    expect(run?.planStamp).toBeUndefined();
    expect(run?.candidatePlan).toBeUndefined();
    expect(h.executions.startsOf('a')).toBe(1);
  });

  it('validates a plan stamped against another catalog, and rejects it when it does not hold here', async () => {
    const h = harness();
    const other = loadCatalog({
      capabilities: [
        ...TEST_CATALOG.capabilities(),
        { target: 'tool:elsewhere', description: 'x', sideEffect: 'none', inputSchema: {}, outputSchema: {} },
      ],
    });
    const plan = planOf([step('a', [], { target: 'tool:elsewhere', inputSchema: {}, outputSchema: {} })]);
    const runId = await stampedRun(h, plan, stampPlan(plan, other, LIMITS));
    await h.coordinator.startRun({ runId });
    expect(counted.validations).toBe(1);
    expect(await h.store.getRun(runId)).toMatchObject({ status: 'failed', terminal: { reason: 'invalid_plan' } });
    expect(h.executions.startCalls).toHaveLength(0);
  });

  it('validates a plan stamped under other limits', async () => {
    const h = harness({ maxSteps: 1 });
    const plan = planOf([step('a'), step('b')]);
    const runId = await stampedRun(h, plan, stampPlan(plan, TEST_CATALOG, LIMITS));
    await h.coordinator.startRun({ runId });
    expect(counted.validations).toBe(1);
    expect(await h.store.getRun(runId)).toMatchObject({ status: 'failed', terminal: { reason: 'invalid_plan' } });
  });
});
