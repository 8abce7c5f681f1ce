/**
 * Usage sums on dynalite: an attempt's spend is added to its step and its run once per attempt key, whatever is
 * repeated, and parallel adds of different attempts all land (decimal costs exactly).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import type { Store } from '../../shared/ports/store.ts';
import { startDynalite, type TestDynamo } from '../support/dynalite.ts';
import { aRun, aStep } from '../support/store-fixtures.ts';

describe('DynamoDB adapter: usage sums', () => {
  let dynamo: TestDynamo;
  let store: Store;
  beforeAll(async () => {
    dynamo = await startDynalite();
    store = createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName });
  });
  afterAll(() => dynamo.stop());

  it('counts an attempt once on its step and its run, however often it is added', async () => {
    const run = aRun();
    await store.createRun(run);
    const step = aStep({ runId: run.runId, stepId: 'a' });
    await store.putSteps([step]);
    const first = await store.addUsage(run.runId, 'a', 'a#1#1', { tokens: 10, costUsd: 0.1 });
    const again = await store.addUsage(run.runId, 'a', 'a#1#1', { tokens: 10, costUsd: 0.1 });
    expect(first).toEqual({ run: { tokens: 10, costUsd: 0.1 }, step: { tokens: 10, costUsd: 0.1 } });
    expect(again).toEqual(first);
    const stored = await store.getRun(run.runId);
    expect([stored?.usageTokens, stored?.usageCostUsd]).toEqual([10, 0.1]);
    expect((await store.getStep(run.runId, 'a'))?.usageTokens).toBe(10);
  });

  it('adds parallel attempts of different steps exactly (decimal costs)', async () => {
    const run = aRun();
    await store.createRun(run);
    await store.putSteps([aStep({ runId: run.runId, stepId: 'x' }), aStep({ runId: run.runId, stepId: 'y' })]);
    await Promise.all([
      store.addUsage(run.runId, 'x', 'x#1#1', { tokens: 1, costUsd: 0.1 }),
      store.addUsage(run.runId, 'y', 'y#1#1', { tokens: 2, costUsd: 0.2 }),
      store.addUsage(run.runId, 'x', 'x#1#2', { tokens: 4, costUsd: 0.000001 }),
    ]);
    const stored = await store.getRun(run.runId);
    expect([stored?.usageTokens, stored?.usageCostUsd]).toEqual([7, 0.300001]);
    expect((await store.getStep(run.runId, 'x'))?.usageCostUsd).toBe(0.100001);
  });
});
