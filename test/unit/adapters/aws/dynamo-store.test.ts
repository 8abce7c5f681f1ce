import 'aws-sdk-client-mock-vitest/extend';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { runLayoutsOf } from '../../../../shared/adapters/aws/dynamo-layouts.ts';
import { createDynamoStore } from '../../../../shared/adapters/aws/dynamo-store.ts';
import { INDEX_SHARDS, indexKeys, indexShard } from '../../../../shared/adapters/aws/table-layout.ts';
import { isConflictError, isPayloadTooLargeError } from '../../../../shared/errors.ts';

const TABLE = 'cairn-unit';
const NOW = new Date('2030-01-01T00:00:00.000Z');
const dynamo = mockClient(DynamoDBClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  dynamo.restore();
});
const client = new DynamoDBClient({ region: 'us-east-1' });
const store = createDynamoStore({ client, tableName: TABLE, now: () => NOW });
// A process that has seen run r1 (started, its steps in its own partition) spells its step keys without a read.
runLayoutsOf(client, TABLE).learn({ runId: 'r1', startedAt: NOW.toISOString() });

const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

const storedStep = {
  PK: { S: 'RUN#r1' },
  SK: { S: 'STEP#child' },
  runId: { S: 'r1' },
  stepId: { S: 'child' },
  status: { S: 'pending' },
  generation: { N: '1' },
  upstream: { L: [{ S: 'left' }, { S: 'right' }] },
  remaining: { N: '1' },
  released: { SS: ['left'] },
  attempts: { N: '0' },
  updatedAt: { S: NOW.toISOString() },
};

beforeEach(() => {
  dynamo.reset();
});

describe('DynamoDB store commands', () => {
  it('claims a step with generation, status and unclaimed in the condition', async () => {
    dynamo.on(UpdateItemCommand).resolves({ Attributes: { ...storedStep, status: { S: 'running' } } });
    await store.transitionStep(
      'r1',
      'child',
      { generation: 3, from: ['ready', 'pending'], unclaimed: true },
      {
        status: 'running',
        claimedBy: 'exec-1',
        appendTrace: [{ kind: 'exec', at: NOW.toISOString(), text: 'claimed' }],
      },
    );
    expect(dynamo).toHaveReceivedCommandWith(UpdateItemCommand, {
      ConditionExpression:
        '#generation = :generation AND #status IN (:from0, :from1) AND attribute_not_exists(#claimedBy)',
      UpdateExpression:
        'SET #status = :status, #claimedBy = :claimedBy, #updatedAt = :updatedAt, ' +
        '#trace = list_append(if_not_exists(#trace, :emptyList), :appendTrace) ' +
        // A write that announces nothing clears what an earlier one announced (the outbox).
        'REMOVE #outbox',
      ExpressionAttributeValues: expect.objectContaining({
        ':generation': { N: '3' },
        ':from0': { S: 'ready' },
        ':from1': { S: 'pending' },
        ':status': { S: 'running' },
        ':claimedBy': { S: 'exec-1' },
      }),
      ReturnValues: 'ALL_NEW',
    });
  });

  it('creates a run with attribute_not_exists and maps a lost condition to ConflictError', async () => {
    dynamo.on(PutItemCommand).rejects(conditionFailed());
    const run = {
      runId: 'r1',
      status: 'planning' as const,
      objective: 'o',
      revision: 0,
      createdAt: NOW.toISOString(),
      updatedAt: NOW.toISOString(),
      replans: 0,
    };
    const error = await store.createRun(run).catch((e: unknown) => e);
    expect(isConflictError(error)).toBe(true);
    expect(dynamo).toHaveReceivedCommandWith(PutItemCommand, {
      TableName: TABLE,
      ConditionExpression: 'attribute_not_exists(#PK)',
      ExpressionAttributeNames: { '#PK': 'PK' },
      Item: expect.objectContaining({
        PK: { S: 'RUN#r1' },
        SK: { S: 'RUN' },
        GSI1PK: { S: `RUNS#${indexShard('r1')}` },
        GSI1SK: { S: `${NOW.toISOString()}#r1` },
        status: { S: 'planning' },
      }),
    });
  });

  it('lists the runs of one status from the status index, every shard, newest first, each its share, with no filter', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [] });
    await store.listRuns({ status: 'failed', limit: 5 });
    const queries = dynamo.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(queries).toHaveLength(INDEX_SHARDS);
    for (const query of queries) {
      // Each shard is read a page of about its share of the 5 at a time (queryNewestAcross reads on while needed).
      expect(query).toMatchObject({
        IndexName: 'GSI_STATUS',
        ScanIndexForward: false,
        Limit: Math.ceil((1.5 * 5) / INDEX_SHARDS) + 1,
      });
      expect(query.FilterExpression).toBeUndefined();
    }
    const partitions = queries.map((query) => Object.values(query.ExpressionAttributeValues ?? {})[0]?.S);
    expect(partitions.sort()).toEqual(indexKeys.runStatusPartitions('default', 'failed').sort());
  });

  it('claims a run key with a conditional put that records the request hash', async () => {
    dynamo.on(PutItemCommand).resolves({});
    expect(await store.claimRunKey('default', 'k1', 'r1', 'h1')).toEqual({ runId: 'r1', requestHash: 'h1' });
    expect(dynamo).toHaveReceivedCommandWith(PutItemCommand, {
      TableName: TABLE,
      ConditionExpression: 'attribute_not_exists(#PK)',
      ExpressionAttributeNames: { '#PK': 'PK' },
      Item: expect.objectContaining({
        PK: { S: 'RUNKEY#k1' },
        SK: { S: 'RUNKEY' },
        runId: { S: 'r1' },
        requestHash: { S: 'h1' },
      }),
    });
  });

  it('reads a claim stored before request hashes as one without a hash', async () => {
    dynamo.on(PutItemCommand).rejects(conditionFailed());
    dynamo.on(GetItemCommand).resolves({ Item: { runId: { S: 'r-old' } } });
    expect(await store.claimRunKey('default', 'k1', 'r-new', 'h-new')).toEqual({ runId: 'r-old' });
  });

  it('reads the winner of a lost run key claim with a consistent read', async () => {
    dynamo.on(PutItemCommand).rejects(conditionFailed());
    dynamo.on(GetItemCommand).resolves({ Item: { runId: { S: 'r-winner' }, requestHash: { S: 'h-winner' } } });
    expect(await store.claimRunKey('default', 'k1', 'r-loser', 'h-loser')).toEqual({
      runId: 'r-winner',
      requestHash: 'h-winner',
    });
    expect(dynamo).toHaveReceivedCommandWith(GetItemCommand, {
      TableName: TABLE,
      Key: { PK: { S: 'RUNKEY#k1' }, SK: { S: 'RUNKEY' } },
      ConsistentRead: true,
    });
  });

  it('reads steps with consistent reads', async () => {
    dynamo.on(GetItemCommand).resolves({ Item: storedStep });
    dynamo.on(QueryCommand).resolves({ Items: [storedStep] });
    await store.getStep('r1', 'child');
    await store.listSteps('r1');
    expect(dynamo).toHaveReceivedCommandWith(GetItemCommand, { ConsistentRead: true });
    expect(dynamo).toHaveReceivedCommandWith(QueryCommand, {
      KeyConditionExpression: '#PK = :pk AND begins_with(#SK, :prefix)',
      ExpressionAttributeNames: { '#PK': 'PK', '#SK': 'SK' },
      ExpressionAttributeValues: { ':pk': { S: 'RUN#r1' }, ':prefix': { S: 'STEP#' } },
      ConsistentRead: true,
    });
  });

  it('begins an idempotent call like Powertools: absent or expired, else read the holder', async () => {
    dynamo.on(PutItemCommand).rejects(conditionFailed());
    dynamo.on(GetItemCommand).resolves({
      Item: { key: { S: 'k' }, status: { S: 'completed' }, expiresAt: { N: '200' }, result: { S: '{"id":7}' } },
    });
    const existing = await store.beginIdempotent('k', 160, 100);
    expect(existing).toEqual({ key: 'k', status: 'completed', result: { id: 7 }, expiresAt: 200 });
    expect(dynamo).toHaveReceivedCommandWith(PutItemCommand, {
      ConditionExpression: 'attribute_not_exists(#PK) OR #expiresAt < :now',
      ExpressionAttributeNames: { '#PK': 'PK', '#expiresAt': 'expiresAt' },
      ExpressionAttributeValues: { ':now': { N: '100' } },
      Item: expect.objectContaining({ status: { S: 'in_progress' }, expiresAt: { N: '160' } }),
    });
    expect(dynamo).toHaveReceivedCommandWith(GetItemCommand, { ConsistentRead: true });
  });

  it('aborts only an in-progress idempotency record', async () => {
    dynamo.on(DeleteItemCommand).rejects(conditionFailed());
    await store.abortIdempotent('k');
    expect(dynamo).toHaveReceivedCommandWith(DeleteItemCommand, {
      Key: { PK: { S: 'IDEMPOTENCY#k' }, SK: { S: 'IDEMPOTENCY' } },
      ConditionExpression: '#status = :inProgress',
      ExpressionAttributeNames: { '#status': 'status' },
    });
  });

  it('writes a large output out of line first, and the step item refers to it', async () => {
    dynamo.on(BatchWriteItemCommand).resolves({});
    dynamo.on(UpdateItemCommand).resolves({});
    await store.transitionStep('r1', 'child', { generation: 1, from: ['running'] }, { output: 'x'.repeat(400 * 1024) });
    const calls = dynamo.calls().map((call) => call.args[0].constructor.name);
    expect(calls).toEqual(['BatchWriteItemCommand', 'UpdateItemCommand']);
    const parts = dynamo.commandCalls(BatchWriteItemCommand)[0]?.args[0].input.RequestItems?.[TABLE] ?? [];
    expect(parts.length).toBeGreaterThan(1);
    // In the run's own blob partitions, which go when the run does.
    for (const part of parts) expect(part.PutRequest?.Item?.PK?.S).toMatch(/^RUNBLOB#r1#\d{1,2}$/);
    const values = dynamo.commandCalls(UpdateItemCommand)[0]?.args[0].input.ExpressionAttributeValues ?? {};
    const output = Object.values(values).find((value) => value.M?.cairnBlob !== undefined);
    expect(output?.M?.parts).toEqual({ N: String(parts.length) });
    expect(output?.M?.run).toEqual({ S: 'r1' });
  });

  it('refuses a trace entry too large for the item before sending anything', async () => {
    const appendTrace = [{ kind: 'exec' as const, at: NOW.toISOString(), text: 'y'.repeat(400 * 1024) }];
    const error = await store
      .transitionStep('r1', 'child', { generation: 1, from: ['running'] }, { appendTrace })
      .catch((e: unknown) => e);
    expect(isPayloadTooLargeError(error)).toBe(true);
    expect(dynamo.calls()).toHaveLength(0);
  });

  it('lists a run’s approvals by consistent reads of the run’s items, never through the index', async () => {
    dynamo.on(QueryCommand).resolves({ Items: [{ PK: { S: 'RUN#r1' }, SK: { S: 'APPROVALREF#a1' } }] });
    dynamo.on(BatchGetItemCommand).resolves({ Responses: { [TABLE]: [] } });
    await store.listRunApprovals('r1');
    const query = dynamo.commandCalls(QueryCommand)[0]?.args[0].input;
    expect(query?.IndexName).toBeUndefined();
    expect(query?.ConsistentRead).toBe(true);
    const read = dynamo.commandCalls(BatchGetItemCommand)[0]?.args[0].input.RequestItems?.[TABLE];
    expect(read).toMatchObject({ ConsistentRead: true, Keys: [{ PK: { S: 'APPROVAL#a1' }, SK: { S: 'APPROVAL' } }] });
  });

  it('names every attribute through ExpressionAttributeNames in every write', async () => {
    dynamo.on(UpdateItemCommand).resolves({});
    dynamo.on(PutItemCommand).resolves({});
    const entry = { id: 'e1', runId: 'r1', at: NOW.toISOString(), events: [] };
    await store.announce(entry);
    await store.updateRun('r1', ['running'], { status: 'complete' }, { announce: entry });
    const writes = [...dynamo.commandCalls(UpdateItemCommand), ...dynamo.commandCalls(PutItemCommand)];
    expect(writes).toHaveLength(2);
    for (const call of writes) {
      const input = call.args[0].input as { ExpressionAttributeNames?: Record<string, string> };
      expect(Object.keys(input.ExpressionAttributeNames ?? {}).length).toBeGreaterThan(0);
    }
    expect(dynamo).toHaveReceivedCommandWith(PutItemCommand, {
      Item: expect.objectContaining({ SK: { S: 'OUTBOX#e1' } }),
      ConditionExpression: 'attribute_not_exists(#PK)',
    });
    expect(dynamo).toHaveReceivedCommandWith(UpdateItemCommand, {
      UpdateExpression: expect.stringContaining('#outbox = :outbox'),
    });
  });
});

describe('DynamoDB store: fewer round trips', () => {
  it("records a batch of announced events with one BatchWriteItem, keyed by its batch's version", async () => {
    dynamo.on(BatchWriteItemCommand).resolves({});
    await store.recordEvents([
      {
        id: 'r9-v12',
        runId: 'r9',
        at: NOW.toISOString(),
        events: [
          { type: 'StepStarted', detail: {} },
          { type: 'StepSucceeded', detail: {} },
        ],
      },
    ]);
    expect(dynamo).toHaveReceivedCommandTimes(BatchWriteItemCommand, 1);
    const keys = (dynamo.commandCalls(BatchWriteItemCommand)[0]?.args[0].input.RequestItems?.[TABLE] ?? []).map(
      (request) => request.PutRequest?.Item?.SK?.S,
    );
    expect(keys).toEqual(['EVENT#v0000000012~0000', 'EVENT#v0000000012~0001']);
  });

  it('reads a run, a step and an attempt with one consistent BatchGetItem', async () => {
    dynamo.on(BatchGetItemCommand).resolves({
      Responses: {
        [TABLE]: [
          storedStep,
          {
            PK: { S: 'RUN#r1' },
            SK: { S: 'RUN' },
            runId: { S: 'r1' },
            status: { S: 'running' },
            objective: { S: 'o' },
            revision: { N: '1' },
            createdAt: { S: NOW.toISOString() },
            updatedAt: { S: NOW.toISOString() },
            replans: { N: '0' },
          },
        ],
      },
    });
    const found = await store.getStepWithRun('r1', 'child', { generation: 2, attempt: 3 });
    expect(found.run?.status).toBe('running');
    expect(found.step?.stepId).toBe('child');
    expect(found.attempt).toBeUndefined();
    expect(dynamo).toHaveReceivedCommandExactlyOnceWith(BatchGetItemCommand, {
      RequestItems: {
        [TABLE]: {
          ConsistentRead: true,
          Keys: [
            { PK: { S: 'RUN#r1' }, SK: { S: 'RUN' } },
            { PK: { S: 'RUN#r1' }, SK: { S: 'STEP#child' } },
            { PK: { S: 'RUN#r1' }, SK: { S: 'ATTEMPT#child#0002#003' } },
          ],
        },
      },
    });
  });

  it('asks again for keys a batch read left unprocessed', async () => {
    dynamo
      .on(BatchGetItemCommand)
      .resolvesOnce({
        Responses: { [TABLE]: [] },
        UnprocessedKeys: { [TABLE]: { Keys: [{ PK: { S: 'RUN#r1' }, SK: { S: 'STEP#child' } }] } },
      })
      .resolves({ Responses: { [TABLE]: [storedStep] } });
    expect(await store.getSteps('r1', ['child'])).toMatchObject([{ stepId: 'child', remaining: 1 }]);
    expect(dynamo).toHaveReceivedCommandTimes(BatchGetItemCommand, 2);
  });
});
