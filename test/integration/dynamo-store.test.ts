import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import type { Store } from '../../shared/ports/store.ts';
import { startDynalite, type TestDynamo } from '../support/dynalite.ts';
import { describeStoreBehaviour } from '../support/store-behaviour.ts';
import { at, uniqueId } from '../support/store-fixtures.ts';

describeStoreBehaviour('DynamoDB adapter on dynalite', async () => {
  const dynamo = await startDynalite();
  return { store: createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName }), stop: dynamo.stop };
});

// Each store instance stands for one process (a Lambda container) with its own memory of a run's event slots.
describe('DynamoDB event log shared by several processes', () => {
  let dynamo: TestDynamo;
  let writers: Store[];
  beforeAll(async () => {
    dynamo = await startDynalite();
    writers = [1, 2, 3].map(() => createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName }));
  });
  afterAll(() => dynamo.stop());

  const event = (runId: string, type: string) => ({ runId, type, at: at(1), detail: {} });
  const writer = (i: number): Store => writers[i % writers.length] as Store;

  it('orders events by when they were appended, whichever process appended them', async () => {
    const runId = uniqueId('run');
    const order = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    // Each process's memory of the next slot goes stale as soon as another process appends.
    for (const [i, type] of order.entries()) await writer(i % 2 === 0 ? 0 : i % 3).appendEvents([event(runId, type)]);
    const listed = await writers[2]?.listEvents(runId);
    expect(listed?.map((e) => e.type)).toEqual(order);
    const seqs = listed?.map((e) => e.seq) ?? [];
    expect([...seqs].sort()).toEqual(seqs);
  });

  it('keeps every event of processes appending at the same moment, each in its own slot', async () => {
    const runId = uniqueId('run');
    const appended = (
      await Promise.all(
        Array.from({ length: 24 }, (_, i) => writer(i).appendEvents([event(runId, `t${i}`), event(runId, `u${i}`)])),
      )
    ).flat();
    const listed = (await writers[0]?.listEvents(runId)) ?? [];
    expect(listed).toHaveLength(48);
    expect(new Set(listed.map((e) => e.seq)).size).toBe(48);
    expect(listed).toEqual([...appended].sort((x, y) => x.seq.localeCompare(y.seq)));
    // One call's events stay in their order.
    for (let i = 0; i < 24; i++) {
      const t = listed.findIndex((e) => e.type === `t${i}`);
      const u = listed.findIndex((e) => e.type === `u${i}`);
      expect(t).toBeLessThan(u);
    }
  });
});
