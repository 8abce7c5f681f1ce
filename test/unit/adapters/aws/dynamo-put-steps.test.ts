import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { runLayoutsOf } from '../../../../shared/adapters/aws/dynamo-layouts.ts';
import { createDynamoStore } from '../../../../shared/adapters/aws/dynamo-store.ts';
import type { StepRecord } from '../../../../shared/ports/store.ts';

const record = (i: number): StepRecord => ({
  runId: 'r',
  stepId: `s${i}`,
  status: 'pending',
  generation: 1,
  upstream: [],
  remaining: 0,
  released: [],
  attempts: 0,
  trace: [],
  updatedAt: '2030-01-01T00:00:00.000Z',
});

/** A client whose first put answers only when released; every other put answers at once. */
function stallingClient() {
  const sent: string[] = [];
  let release: () => void = () => {};
  const stalled = new Promise<void>((resolve) => {
    release = resolve;
  });
  const client = {
    send: async (command: { input: { Item?: { stepId?: { S?: string } } } }) => {
      sent.push(command.input.Item?.stepId?.S ?? '?');
      if (sent.length === 1) await stalled;
      return {};
    },
  } as unknown as DynamoDBClient;
  return { client, sent, release };
}

describe('putSteps', () => {
  it('keeps writing the other records while one put is slow, instead of waiting for it at the end of a round', async () => {
    const { client, sent, release } = stallingClient();
    const store = createDynamoStore({ client, tableName: 't' });
    // A process that has seen the run: its step keys need no read of the run item.
    runLayoutsOf(client, 't').learn({ runId: 'r', startedAt: '2030-01-01T00:00:00.000Z' });
    const records = Array.from({ length: 40 }, (_, i) => record(i));
    const writing = store.putSteps(records);
    for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(40);
    release();
    await writing;
    expect([...sent].sort()).toEqual(records.map((r) => r.stepId).sort());
  });

  it('starts no new put after one failed, and fails', async () => {
    let calls = 0;
    const client = {
      send: async () => {
        calls += 1;
        if (calls === 1) throw new Error('the store is gone');
        return {};
      },
    } as unknown as DynamoDBClient;
    const store = createDynamoStore({ client, tableName: 't' });
    // A process that has seen the run: its step keys need no read of the run item.
    runLayoutsOf(client, 't').learn({ runId: 'r', startedAt: '2030-01-01T00:00:00.000Z' });
    await expect(store.putSteps(Array.from({ length: 40 }, (_, i) => record(i)))).rejects.toThrow('the store is gone');
    for (let i = 0; i < 20; i += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toBeLessThan(40);
  });
});
