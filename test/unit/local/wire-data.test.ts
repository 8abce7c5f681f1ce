import { describe, expect, it } from 'vitest';
import { NOT_WIRE, wireCopy, wireOutput } from '../../../infra/local/wire-data.ts';

const roundTrip = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

const request = {
  TableName: 't',
  Key: { PK: { S: 'RUN#1' }, SK: { S: 'STEP#a' } },
  UpdateExpression: 'SET #s = :s',
  ConditionExpression: undefined,
  ExpressionAttributeNames: { '#s': 'status' },
  ExpressionAttributeValues: {
    ':s': { S: 'running' },
    ':n': { N: '3' },
    ':m': { M: { list: { L: [{ NULL: true }, { BOOL: false }, { SS: ['a', 'b'] }] } } },
  },
  Limit: 25,
};

describe('wireCopy', () => {
  it('gives what JSON’s round trip gives for plain wire data, members left undefined left out', () => {
    const copy = wireCopy(request);
    expect(copy).toEqual(roundTrip(request));
    expect(Object.keys(copy as object)).not.toContain('ConditionExpression');
  });

  it('copies, so that whoever changes the copy leaves the original as it was', () => {
    const copy = wireCopy(request) as typeof request;
    copy.Key.PK.S = 'changed';
    delete (copy as Partial<typeof request>).Limit;
    expect(request.Key.PK.S).toBe('RUN#1');
    expect(request.Limit).toBe(25);
  });

  it('names binary members and values JSON would change instead of copying them', () => {
    expect(wireCopy({ Item: { data: { B: 'AAE=' } } })).toBe(NOT_WIRE);
    expect(wireCopy({ Item: { data: { BS: ['AAE='] } } })).toBe(NOT_WIRE);
    expect(wireCopy({ Item: { data: { B: new Uint8Array([1]) } } })).toBe(NOT_WIRE);
    expect(wireCopy({ at: new Date(0) })).toBe(NOT_WIRE);
    expect(wireCopy({ Limit: Number.NaN })).toBe(NOT_WIRE);
    expect(wireCopy({ list: [1, undefined] })).toBe(NOT_WIRE);
  });
});

describe('wireOutput', () => {
  it('answers plain wire data itself, without a copy', () => {
    const answer = { Item: { PK: { S: 'x' }, n: { N: '1' } }, Count: 1 };
    expect(wireOutput(answer)).toBe(answer);
  });

  it('answers JSON’s round trip of data that is not its own round trip', () => {
    const answer = { Item: { PK: { S: 'x' } }, LastEvaluatedKey: undefined };
    const output = wireOutput(answer);
    expect(output).not.toBe(answer);
    expect(Object.keys(output as object)).toEqual(['Item']);
  });

  it('names an answer holding binary, which the SDK must read', () => {
    expect(wireOutput({ Item: { data: { B: 'AAE=' } } })).toBe(NOT_WIRE);
  });
});
