import { describe, expect, it } from 'vitest';
import { stackCounters } from '../../../infra/local/stack/instrument.ts';
import type { Mailbox } from '../../../shared/ports/mailbox.ts';
import type { Store } from '../../../shared/ports/store.ts';

describe('stackCounters', () => {
  it('counts writes, audit batches, reads, their items and bytes, plan revisions asked for, mailbox sends and batches', async () => {
    const counters = stackCounters(true);
    const onCommand = counters.onCommand;
    if (!onCommand) throw new Error('an instrumented stack has a command hook');
    onCommand('PutItemCommand', {}, {});
    onCommand('UpdateItemCommand', {}, {});
    onCommand('BatchWriteItemCommand', {}, {});
    onCommand('GetItemCommand', {}, { Item: { SK: { S: 'PLAN#000001' }, n: { N: '123' } } });
    onCommand(
      'BatchGetItemCommand',
      { RequestItems: { t: { Keys: [{}, {}, {}] } } },
      { Responses: { t: [{ SK: { S: 'STEP#a' } }, { SK: { S: 'RUN' }, m: { M: { on: { BOOL: true } } } }] } },
    );
    onCommand('QueryCommand', {}, { Count: 4, Items: [{ l: { L: [{ S: 'ab' }] } }] });
    counters.onStateEntered?.();
    counters.onStateEntered?.();
    counters.invoked('StepExecutor');
    const store = counters.counted({ getPlanRevision: async () => undefined } as unknown as Store);
    await store.getPlanRevision('r', 1);
    const box = counters.sending({ send: async () => {}, ask: async () => ({ ok: true }) } as unknown as Mailbox);
    await box.send('r', { kind: 'AwaitRun', token: 't', opening: 0 });
    await box.ask('r', { kind: 'AwaitRun', token: 't', opening: 0 });
    await counters.batching(async () => [])('r', []);

    expect(counters.stats()).toEqual({
      stateTransitions: 2,
      lambdaInvocations: { StepExecutor: 1 },
      dynamoWrites: 2,
      auditWrites: 1,
      dynamoReads: 3,
      dynamoReadItems: 8,
      // SK+PLAN#000001 (2+11) and n+123 (1+3); SK+STEP#a (2+6); SK+RUN (2+3) and m+{on: true} (1+3+2+1); l+[ab] (1+3+1+2)
      dynamoReadBytes: 13 + 4 + 8 + 5 + 7 + 7,
      planReads: 1,
      mailboxSends: 2,
      mailboxBatches: 1,
    });
  });

  it('adds no hooks and counts nothing when not instrumenting', () => {
    const counters = stackCounters(false);
    counters.invoked('StepExecutor');

    expect(counters.onCommand).toBeUndefined();
    expect(counters.onStateEntered).toBeUndefined();
    expect(counters.stats()).toMatchObject({ stateTransitions: 0, lambdaInvocations: {}, dynamoWrites: 0 });
  });
});
