/** The RunLog behaviour suite on the in-memory adapter (the simulation's) and on the DynamoDB one (dynalite). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoRunLogOf, createDynamoStore } from '../../../shared/adapters/aws/dynamo-store.ts';
import { createMemoryRunLog } from '../../../shared/adapters/memory/run-log.ts';
import { createMemoryStore } from '../../../shared/adapters/memory/store.ts';
import { startDynalite, type TestDynamo } from '../../support/dynalite.ts';
import { runLogBehaviour } from '../../support/run-log-behaviour.ts';
import { anAttempt, aRun, aStep, at } from '../../support/store-fixtures.ts';

describe('the in-memory run log', () => {
  runLogBehaviour(async () => {
    const store = createMemoryStore();
    return { store, runLog: createMemoryRunLog(store) };
  });
});

describe('the DynamoDB run log (dynalite)', () => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(() => dynamo.stop());
  runLogBehaviour(async () => {
    const options = { client: dynamo.client, tableName: dynamo.tableName };
    const store = createDynamoStore(options);
    return { store, runLog: createDynamoRunLogOf(options, store) };
  });

  it('keeps the attempt a moved generation carried on its step item as an attempt of that generation', async () => {
    const options = { client: dynamo.client, tableName: dynamo.tableName };
    const store = createDynamoStore(options);
    const runLog = createDynamoRunLogOf(options, store);
    const run = aRun();
    await store.createRun(run);
    const step = aStep({ runId: run.runId, stepId: 'a', status: 'running', attempts: 1 });
    const batch = (version: number, images: { steps: (typeof step)[]; moved: string[] }) => ({
      runId: run.runId,
      version,
      at: at(version),
      events: [],
      images: { approvals: [], revisions: [], ...images },
      effects: [],
      published: [],
      counts: {},
    });
    await runLog.project(batch(1, { steps: [step], moved: [] }));
    const attempt = anAttempt({ runId: run.runId, stepId: 'a', outcome: 'succeeded', output: { value: 1 } });
    await store.transitionStep(
      run.runId,
      'a',
      { generation: 1, from: ['running'] },
      { attemptRecord: attempt, output: { value: 1 } },
    );
    const moved = { ...step, generation: 2, status: 'ready' as const, attempts: 0 };
    await runLog.project(batch(2, { steps: [moved], moved: ['a'] }));
    await runLog.project(batch(2, { steps: [moved], moved: ['a'] }));

    expect(await store.getStep(run.runId, 'a')).toMatchObject({ generation: 2, status: 'ready' });
    expect(await store.listAttempts(run.runId, 'a')).toEqual([{ ...attempt, generation: 1 }]);
  });
});
