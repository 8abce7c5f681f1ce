import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore } from '../../shared/adapters/aws/dynamo-store.ts';
import { stepsInvalidatedParts } from '../../shared/events/bounded-details.ts';
import { type OutboxEntry, outboxOf, type StreamRecord } from '../../shared/events/outbox.ts';
import type { Store } from '../../shared/ports/store.ts';
import { startDynalite, type TestDynamo } from '../support/dynalite.ts';
import { describeStoreBehaviour } from '../support/store-behaviour.ts';
import { aRun, aStep, uniqueId } from '../support/store-fixtures.ts';

describeStoreBehaviour('DynamoDB adapter on dynalite', async () => {
  const dynamo = await startDynalite();
  return { store: createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName }), stop: dynamo.stop };
});

describe('DynamoDB adapter: the outbox travels with the write', () => {
  let dynamo: TestDynamo;
  let store: Store;
  const records: StreamRecord[] = [];
  beforeAll(async () => {
    dynamo = await startDynalite();
    store = createDynamoStore({
      client: dynamo.client,
      tableName: dynamo.tableName,
      stream: (record) => records.push(record),
    });
  });
  afterAll(() => dynamo.stop());

  const announcement = (runId: string, id: string) => ({
    id,
    runId,
    at: '2030-01-01T00:00:00.000Z',
    events: [{ type: 'StepStarted' as const, detail: { runId, stepId: 's', generation: 1, target: null } }],
  });

  it('streams a transition that announced, with its events in the new image, and nothing for a lost condition', async () => {
    const step = aStep({ status: 'ready' });
    await store.putSteps([step]);
    records.length = 0;
    const moved = await store.transitionStep(
      step.runId,
      step.stepId,
      { generation: 1, from: ['ready'] },
      { status: 'running' },
      announcement(step.runId, 'w1'),
    );
    expect(moved?.status).toBe('running');
    const lost = await store.transitionStep(
      step.runId,
      step.stepId,
      { generation: 1, from: ['ready'] },
      { status: 'running' },
      announcement(step.runId, 'w2'),
    );
    expect(lost).toBeUndefined();
    expect(records.map(outboxOf).map((entry) => entry?.id)).toEqual(['w1']);
  });

  it('clears the outbox with a write that announces nothing, so the old events are never relayed again', async () => {
    const step = aStep({ status: 'ready' });
    await store.putSteps([step]);
    await store.transitionStep(
      step.runId,
      step.stepId,
      { generation: 1, from: ['ready'] },
      { status: 'running' },
      announcement(step.runId, 'w3'),
    );
    records.length = 0;
    await store.transitionStep(step.runId, step.stepId, { generation: 1, from: ['running'] }, { attempts: 2 });
    expect(records).toEqual([]);
    const item = await dynamo.client.send(
      new GetItemCommand({
        TableName: dynamo.tableName,
        Key: { PK: { S: `RUN#${step.runId}` }, SK: { S: `STEP#${step.stepId}` } },
      }),
    );
    expect(item.Item?.outbox).toBeUndefined();
  });

  /** An invalidation of 4,000 steps with 64-character ids, in parts as services announce it: ~290 KB of events. */
  const invalidationOf = (runId: string, id: string): OutboxEntry => {
    const ids = Array.from({ length: 4000 }, (_, i) => `s${String(i).padStart(63, '0')}`);
    const parts = stepsInvalidatedParts(runId, ids, 'root changed');
    return {
      ...announcement(runId, id),
      events: parts.map((detail) => ({ type: 'StepsInvalidated' as const, detail: { ...detail } })),
    };
  };

  const rawItem = async (pk: string, sk: string) =>
    (
      await dynamo.client.send(
        new GetItemCommand({ TableName: dynamo.tableName, Key: { PK: { S: pk }, SK: { S: sk } } }),
      )
    ).Item;

  it('keeps the events of a large announcement out of line: the item stays small, the relay reads them back whole', async () => {
    const run = aRun({ status: 'running' });
    await store.createRun(run);
    records.length = 0;
    const entry = invalidationOf(run.runId, 'big-update');
    expect(JSON.stringify(entry).length).toBeGreaterThan(250_000);

    expect(await store.updateRun(run.runId, ['running'], {}, { announce: entry })).toBeDefined();

    const item = await rawItem(`RUN#${run.runId}`, 'RUN');
    expect(Buffer.byteLength(JSON.stringify(item), 'utf8')).toBeLessThan(4 * 1024);
    expect(typeof item?.outbox?.S).toBe('string');
    const streamed = records.map(outboxOf);
    expect(streamed.map((e) => e?.id)).toEqual(['big-update']);
    expect(await store.restoreAnnouncements(streamed.filter((e) => e !== undefined))).toEqual([entry]);
  });

  it('keeps a large announcement of its own (an outbox item) out of line too', async () => {
    const runId = uniqueId('run');
    records.length = 0;
    const entry = invalidationOf(runId, 'big-put');

    await store.announce(entry);

    const item = await rawItem(`RUN#${runId}`, 'OUTBOX#big-put');
    expect(Buffer.byteLength(JSON.stringify(item), 'utf8')).toBeLessThan(4 * 1024);
    const streamed = records.map(outboxOf).filter((e) => e !== undefined);
    expect(streamed.map((e) => e.events)).toEqual([[]]);
    expect(await store.restoreAnnouncements(streamed)).toEqual([entry]);
  });

  it('keeps every event of writers recording at the same moment: no shared counter to contend for', async () => {
    const runId = uniqueId('run');
    const writers = [1, 2, 3].map(() => createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName }));
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (writers[i % 3] as Store).recordEvents([{ ...announcement(runId, `c${i}`), at: '2030-01-01T00:00:01.000Z' }]),
      ),
    );
    const listed = await store.listEvents(runId);
    expect(listed).toHaveLength(60);
    expect(new Set(listed.map((e) => e.seq)).size).toBe(60);
  });
});

describe('DynamoDB adapter: an idempotency record whose write lost its answer', () => {
  let dynamo: TestDynamo;
  let store: Store;
  /** What the next PutItem of an idempotency record does after it landed: lose its answer, or be sent again. */
  let afterLanding: 'timeout' | 'sdk-retry' | undefined;
  /** How many of the next GetItems fail (a read that times out too). */
  let failingReads = 0;
  beforeAll(async () => {
    dynamo = await startDynalite();
    dynamo.client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'GetItemCommand' && failingReads > 0) {
          failingReads -= 1;
          throw Object.assign(new Error('no answer for a read'), { name: 'TimeoutError' });
        }
        const item = (args.input as { Item?: { SK?: { S?: string }; status?: { S?: string } } }).Item;
        const mode = afterLanding;
        if (context.commandName !== 'PutItemCommand' || item?.status?.S !== 'in_progress' || mode === undefined)
          return next(args);
        afterLanding = undefined;
        const result = await next(args);
        // The SDK sends a timed-out request again: the copy finds the record there and loses its condition.
        if (mode === 'sdk-retry') return next(args);
        throw Object.assign(new Error(`no answer for ${String(item.SK?.S)}`), { name: 'TimeoutError', result });
      },
      { step: 'initialize', name: 'loseIdempotencyAnswers' },
    );
    store = createDynamoStore({ client: dynamo.client, tableName: dynamo.tableName });
  });
  afterAll(() => dynamo.stop());

  for (const mode of ['timeout', 'sdk-retry'] as const) {
    it(`is its writer's (${mode}), and still another caller's call in progress`, async () => {
      const key = uniqueId('lost-answer');
      afterLanding = mode;
      expect(await store.beginIdempotent(key, 2_000_000_060, 2_000_000_000)).toBeUndefined();
      expect(afterLanding).toBeUndefined();
      expect(await store.beginIdempotent(key, 2_000_000_060, 2_000_000_001)).toMatchObject({ status: 'in_progress' });
    });
  }

  it('takes its own record back when it cannot read whether the write landed, so a retry may begin', async () => {
    const key = uniqueId('lost-unread');
    afterLanding = 'timeout';
    failingReads = 3;
    await expect(store.beginIdempotent(key, 2_000_000_060, 2_000_000_000)).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    expect(failingReads).toBe(0);
    // Left in progress, it would hold the key until it expires: every retry of the step would find it.
    expect(await store.beginIdempotent(key, 2_000_000_060, 2_000_000_001)).toBeUndefined();
  });

  it('leaves the error standing when the write did not land', async () => {
    const key = uniqueId('never-landed');
    const refusing = createDynamoStore({
      client: {
        send: async (command: { constructor: { name: string } }) => {
          if (command.constructor.name === 'PutItemCommand')
            throw Object.assign(new Error('no answer'), { name: 'TimeoutError' });
          return dynamo.client.send(command as never);
        },
      } as unknown as typeof dynamo.client,
      tableName: dynamo.tableName,
    });
    await expect(refusing.beginIdempotent(key, 2_000_000_060, 2_000_000_000)).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    expect(await store.beginIdempotent(key, 2_000_000_060, 2_000_000_000)).toBeUndefined();
  });
});
