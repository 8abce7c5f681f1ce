import type { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOCAL_RETENTION_SWEEP_MS, startRetentionSweep } from '../../../infra/local/retention-sweep.ts';

/** A table that answers every scan with no item, and remembers the expiry each scan filtered on. */
function emptyTable() {
  const scannedBefore: string[] = [];
  const client = {
    send: async (command: ScanCommand) => {
      scannedBefore.push(String(command.input.ExpressionAttributeValues?.[':now']?.N));
      return { Items: [] };
    },
  } as unknown as DynamoDBClient;
  return { client, scannedBefore };
}

describe('startRetentionSweep', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sweeps every interval, as of the clock it is given, until closed', async () => {
    const { client, scannedBefore } = emptyTable();
    let now = new Date('2030-01-01T00:00:00.000Z');
    const sweep = startRetentionSweep({
      client,
      tableName: 'cairn',
      retention: { purgeRun: async () => 0 },
      clock: () => now,
      onError: (error) => {
        throw error;
      },
    });
    expect(scannedBefore).toEqual([]);
    now = new Date('2030-03-01T00:00:00.000Z');
    await vi.advanceTimersByTimeAsync(LOCAL_RETENTION_SWEEP_MS);
    expect(scannedBefore).toEqual([String(Date.parse('2030-03-01T00:00:00.000Z') / 1000)]);
    sweep.close();
    await vi.advanceTimersByTimeAsync(3 * LOCAL_RETENTION_SWEEP_MS);
    expect(scannedBefore).toHaveLength(1);
  });

  it('reports a failed sweep and sweeps again at the next interval', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const client = {
      send: async () => {
        calls += 1;
        if (calls === 1) throw new Error('table busy');
        return { Items: [] };
      },
    } as unknown as DynamoDBClient;
    const sweep = startRetentionSweep({
      client,
      tableName: 'cairn',
      retention: { purgeRun: async () => 0 },
      clock: () => new Date(),
      intervalMs: 1000,
      onError: (error) => errors.push(error),
    });
    await vi.advanceTimersByTimeAsync(2000);
    sweep.close();
    expect(errors.map(String)).toEqual(['Error: table busy']);
    expect(calls).toBe(2);
  });
});
