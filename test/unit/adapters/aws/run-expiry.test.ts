import { describe, expect, it } from 'vitest';
import { encodeRun, runExpiresAt } from '../../../../shared/adapters/aws/dynamo-codec.ts';
import { indexShard } from '../../../../shared/adapters/aws/table-layout.ts';
import { aRun, at } from '../../../support/store-fixtures.ts';

const DAY = 86_400;
const seconds = (iso: string): number => Date.parse(iso) / 1000;

describe('runExpiresAt', () => {
  it('gives no expiry while the run is open or paused for a person', () => {
    for (const status of ['planning', 'running', 'paused'] as const)
      expect(runExpiresAt(aRun({ status, updatedAt: at(5) }), DAY)).toBeUndefined();
  });

  it('counts the retention from the terminal record, else from the last update, once the run has ended', () => {
    const terminal = { state: 'complete' as const, reason: 'done', evidence: {}, at: at(10) };
    expect(runExpiresAt(aRun({ status: 'complete', terminal, updatedAt: at(20) }), DAY)).toBe(seconds(at(10)) + DAY);
    expect(runExpiresAt(aRun({ status: 'cancelled', updatedAt: at(20) }), 7 * DAY)).toBe(seconds(at(20)) + 7 * DAY);
  });
});

describe('encodeRun', () => {
  it('stamps an ended run item with its expiry and an open one with none', () => {
    expect(encodeRun(aRun({ status: 'running' }), DAY).expiresAt).toBeUndefined();
    expect(encodeRun(aRun({ status: 'failed', updatedAt: at(3) }), DAY).expiresAt).toEqual({
      N: String(seconds(at(3)) + DAY),
    });
  });

  it('carries the keys of the listing by status: status and shard, then createdAt and id', () => {
    const run = aRun({ status: 'paused', createdAt: at(1) });
    const item = encodeRun(run, DAY);
    expect(item.GSI_STATUS_PK).toEqual({ S: `RUNSTATUS#paused#${indexShard(run.runId)}` });
    expect(item.GSI_STATUS_SK).toEqual({ S: `${at(1)}#${run.runId}` });
  });
});
