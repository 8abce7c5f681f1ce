/**
 * StartRun and the validation stamp: a candidate whose stamp matches the coordinator's catalog and limits is taken
 * as revision 1 without a second validation; any other candidate is validated in full, as before.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createDynamoRunLogOf, createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { type Catalog, loadCatalog } from '../../shared/plan/catalog.ts';
import type { Plan, PlanStep } from '../../shared/plan/schema.ts';
import { stampPlan } from '../../shared/plan/stamp.ts';
import type { Executions } from '../../shared/ports/executions.ts';
import type { Store } from '../../shared/ports/store.ts';
import { type Coordinator, type CoordinatorConfig, createCoordinator } from '../../shared/services/coordinator.ts';
import { type Deciding, decidingFor } from '../support/deciding.ts';
import { startDynalite, type TestDynamo } from '../support/dynalite.ts';
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

const TEST_CATALOG: Catalog = loadCatalog({
  capabilities: [
    {
      target: 'tool:test.echo',
      description: 'Returns what it is given.',
      sideEffect: 'none',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object' },
    },
  ],
});
const TEST_CONFIG: CoordinatorConfig = {
  runDeadlineSeconds: 3600,
  retryBaseSeconds: 1,
  retryCapSeconds: 60,
  maxSteps: 64,
  maxDepth: 16,
  traceRetention: 'last',
};
const LIMITS = { maxSteps: TEST_CONFIG.maxSteps, maxDepth: TEST_CONFIG.maxDepth };

const step = (id: string, dependsOn: string[] = [], overrides: Partial<PlanStep> = {}): PlanStep => ({
  id,
  title: `Step ${id}`,
  target: 'tool:test.echo',
  dependsOn,
  input: { from: id },
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object' },
  ...overrides,
});
const planOf = (steps: PlanStep[]): Plan => ({ schemaVersion: 1, revision: 1, objective: 'Test the engine', steps });

/** StartRun's own business: the coordinator on the DynamoDB store, with the step starts it asks for recorded. */
interface Harness {
  readonly store: Store;
  readonly coordinator: Coordinator;
  readonly started: string[];
}

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
const opened: Deciding[] = [];
afterAll(async () => {
  for (const deciding of opened.splice(0)) deciding.close();
  await dynamo.stop();
});

function harness(config: Partial<CoordinatorConfig> = {}): Harness {
  const store = createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName });
  const started: string[] = [];
  const executions: Executions = {
    start: async (_machine, name) => {
      started.push(name);
      return { executionId: name, started: true };
    },
    sendTaskSuccess: async () => {},
    sendTaskFailure: async () => {},
    stop: async () => {},
    stopNamed: async () => {},
  };
  const deciding = decidingFor({
    store,
    runLog: createDynamoRunLogOf(dynamo, store),
    executions,
    catalog: TEST_CATALOG,
  });
  opened.push(deciding);
  const coordinator = createCoordinator({
    store,
    mailbox: deciding.mailbox,
    executions,
    catalog: TEST_CATALOG,
    clock: () => new Date(),
    newId: () => uniqueId('id'),
    config: { ...TEST_CONFIG, ...config },
  });
  // StartRun is handed to the run's decider: a test reads the run once the decider has taken it.
  const startRun: Coordinator['startRun'] = async (request) => {
    const answer = await coordinator.startRun(request);
    await deciding.mailbox.idle();
    return answer;
  };
  return { store, coordinator: { ...coordinator, startRun }, started };
}

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
    expect(h.started.filter((name) => name.includes('-a-'))).toHaveLength(1);
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
    expect(h.started).toHaveLength(0);
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
