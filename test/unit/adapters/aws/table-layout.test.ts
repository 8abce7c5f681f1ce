import { describe, expect, it } from 'vitest';
import {
  attemptPrefix,
  GSI1_NAME,
  INDEX_SHARDS,
  indexKeys,
  indexShard,
  itemKeys,
  STATUS_INDEX_NAME,
  tableDefinition,
  tenantScoped,
} from '../../../../shared/adapters/aws/table-layout.ts';

/** FNV-1a of these ids mod 8, computed by hand once: a change of the hash would orphan stored index entries. */
const PINNED_SHARDS = [4, 4, 2];

describe('table layout', () => {
  it('orders attempt keys by step, generation and attempt number', () => {
    const keys = [
      itemKeys.attempt('r', 'a', 2, 1),
      itemKeys.attempt('r', 'a', 1, 10),
      itemKeys.attempt('r', 'a', 1, 2),
    ].map((k) => k.SK);
    expect([...keys].sort()).toEqual(['ATTEMPT#a#0001#002', 'ATTEMPT#a#0001#010', 'ATTEMPT#a#0002#001']);
  });

  it('keeps one step attempt prefix from matching another step with a longer id', () => {
    expect(itemKeys.attempt('r', 'a.b', 1, 1).SK.startsWith(attemptPrefix('a'))).toBe(false);
    expect(itemKeys.attempt('r', 'a', 1, 1).SK.startsWith(attemptPrefix('a'))).toBe(true);
  });

  it('indexes runs by creation time and approvals by status, each in the shard of its id', () => {
    expect(indexKeys.run('default', '2030-01-01T00:00:00.000Z', 'r1')).toEqual({
      GSI1PK: `RUNS#${indexShard('r1')}`,
      GSI1SK: '2030-01-01T00:00:00.000Z#r1',
    });
    expect(indexKeys.approval('default', 'pending', 't', 'a1')).toEqual({
      GSI1PK: `APPROVALS#pending#${indexShard('a1')}`,
      GSI1SK: 't#a1',
    });
    expect(indexKeys.runPartitions('default')).toHaveLength(INDEX_SHARDS);
    expect(indexKeys.runPartitions('default')).toContain(indexKeys.run('default', 't', 'r1').GSI1PK);
    expect(indexKeys.approvalPartitions('default', 'pending')).toContain(
      indexKeys.approval('default', 'pending', 't', 'a1').GSI1PK,
    );
  });

  it('spreads ids over every shard, the same way in every process', () => {
    const counts = new Array<number>(INDEX_SHARDS).fill(0);
    for (let i = 0; i < 800; i++) counts[indexShard(`run-${i}`)] = (counts[indexShard(`run-${i}`)] ?? 0) + 1;
    // Each shard gets a fair share (an even split is 100 each): no hot partition.
    for (const count of counts) expect(count).toBeGreaterThan(60);
    // Pinned values: an index key written by one release must be found by the next.
    expect(['a', 'run-1', 'x.y.g1.approval.a1.1'].map(indexShard)).toEqual(PINNED_SHARDS);
  });

  it('defines an on-demand table with string keys and two GSIs projecting every attribute', () => {
    const definition = tableDefinition('cairn');
    expect(definition).toMatchObject({
      TableName: 'cairn',
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: 'PK', KeyType: 'HASH' },
        { AttributeName: 'SK', KeyType: 'RANGE' },
      ],
    });
    expect(definition.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: GSI1_NAME,
        KeySchema: [
          { AttributeName: 'GSI1PK', KeyType: 'HASH' },
          { AttributeName: 'GSI1SK', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
      {
        IndexName: STATUS_INDEX_NAME,
        KeySchema: [
          { AttributeName: 'GSI_STATUS_PK', KeyType: 'HASH' },
          { AttributeName: 'GSI_STATUS_SK', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
  });
});

describe('tenant-scoped keys', () => {
  it("keeps the default tenant's names, and puts another tenant in every listing, run key and watcher partition", () => {
    expect(indexKeys.runPartitions('default')[0]).toBe('RUNS#0');
    expect(indexKeys.runPartitions('acme')[0]).toBe('T#acme#RUNS#0');
    expect(indexKeys.runByStatus('acme', 'running', 't', 'r').GSI_STATUS_PK).toMatch(/^T#acme#RUNSTATUS#running#\d$/);
    expect(indexKeys.approvalPartitions('acme', 'pending')[0]).toBe('T#acme#APPROVALS#pending#0');
    expect(itemKeys.runKey('default', 'k').PK).toBe('RUNKEY#k');
    expect(itemKeys.runKey('acme', 'k').PK).toBe('T#acme#RUNKEY#k');
    expect(itemKeys.watchPartition('acme', 'db:orders')).toBe('T#acme#WATCH#db:orders');
    // A default-tenant key that looks like another tenant's lands elsewhere: unscoped names never start with T#.
    expect(itemKeys.runKey('default', 'T#acme#k').PK).not.toBe(itemKeys.runKey('acme', 'k').PK);
    expect(tenantScoped('acme', 'X')).toBe('T#acme#X');
  });
});
