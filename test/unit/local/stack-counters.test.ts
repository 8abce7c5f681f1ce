import { describe, expect, it } from 'vitest';
import { stackCounters } from '../../../infra/local/stack/instrument.ts';

describe('stackCounters', () => {
  it('counts writes, audit batches, reads and the items they read when instrumenting', () => {
    const counters = stackCounters(true);
    const onCommand = counters.onCommand;
    if (!onCommand) throw new Error('an instrumented stack has a command hook');
    onCommand('PutItemCommand', {}, {});
    onCommand('UpdateItemCommand', {}, {});
    onCommand('BatchWriteItemCommand', {}, {});
    onCommand('GetItemCommand', {}, {});
    onCommand('BatchGetItemCommand', { RequestItems: { t: { Keys: [{}, {}, {}] } } }, {});
    onCommand('QueryCommand', {}, { Count: 4 });
    counters.onStateEntered?.();
    counters.onStateEntered?.();
    counters.invoked('StepExecutor');

    expect(counters.stats()).toEqual({
      stateTransitions: 2,
      lambdaInvocations: { StepExecutor: 1 },
      dynamoWrites: 2,
      auditWrites: 1,
      dynamoReads: 3,
      dynamoReadItems: 8,
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
