import { describe, expect, it } from 'vitest';
import {
  attemptPrefix,
  GSI1_NAME,
  indexKeys,
  itemKeys,
  tableDefinition,
} from '../../../../shared/adapters/aws/table-layout.ts';

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

  it('indexes runs by creation time and approvals by status', () => {
    expect(indexKeys.run('2030-01-01T00:00:00.000Z', 'r1')).toEqual({
      GSI1PK: 'RUNS',
      GSI1SK: '2030-01-01T00:00:00.000Z#r1',
    });
    expect(indexKeys.approval('pending', 't', 'a1')).toEqual({ GSI1PK: 'APPROVALS#pending', GSI1SK: 't#a1' });
  });

  it('defines an on-demand table with string keys and a GSI projecting every attribute', () => {
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
    ]);
  });
});
