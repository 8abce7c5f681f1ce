import { describe, expect, it } from 'vitest';
import { faultyBus } from '../../../infra/local/faults/bus.ts';
import { createFaultInjector } from '../../../infra/local/faults/injector.ts';
import { faultyHandler } from '../../../infra/local/faults/lambda.ts';
import { parseFaultSpec } from '../../../infra/local/faults/spec.ts';
import { pointOfCommand, streamRecordOf } from '../../../infra/local/faults/store.ts';
import { createLocalEventBus } from '../../../shared/adapters/local/event-bus.ts';
import { OUTBOX_ATTRIBUTE } from '../../../shared/events/outbox.ts';

const faults = (spec: string, seed = 1) => createFaultInjector(parseFaultSpec(spec), seed);

describe('store faults', () => {
  it('tell writes from reads by command', () => {
    expect(pointOfCommand('UpdateItemCommand')).toBe('store.write');
    expect(pointOfCommand('BatchWriteItemCommand')).toBe('store.write');
    expect(pointOfCommand('QueryCommand')).toBe('store.read');
    expect(pointOfCommand('CreateTableCommand')).toBeUndefined();
  });

  it('stream a landed write whose answer was lost only when the write announced something', () => {
    const outbox = { [OUTBOX_ATTRIBUTE]: { S: '{}' } };
    const item = { PK: { S: 'RUN#r' }, SK: { S: 'STEP#a' }, ...outbox };
    expect(streamRecordOf('PutItemCommand', { Item: item }, {})).toEqual({
      eventName: 'INSERT',
      dynamodb: { NewImage: item },
    });
    expect(streamRecordOf('PutItemCommand', { Item: { PK: { S: 'x' } } }, {})).toBeUndefined();
    const updated = { Attributes: item };
    const setsOutbox = { ExpressionAttributeNames: { '#outbox': OUTBOX_ATTRIBUTE } };
    expect(streamRecordOf('UpdateItemCommand', setsOutbox, updated)?.eventName).toBe('MODIFY');
    // An update that left an older outbox on the item announces nothing new.
    expect(streamRecordOf('UpdateItemCommand', { ExpressionAttributeNames: { '#s': 'status' } }, updated)).toBe(
      undefined,
    );
  });
});

describe('faultyBus', () => {
  it('delivers a duplicated event twice and a dropped one once, later, all within drain()', async () => {
    for (const [spec, times] of [
      ['bus.deliver:duplicate@1', 2],
      ['bus.deliver:drop-once=30@1', 1],
      ['bus.deliver:delay=30@1', 1],
    ] as const) {
      const bus = faultyBus(faults(spec), createLocalEventBus());
      let delivered = 0;
      bus.subscribe({ 'detail-type': ['StepFailed'] }, () => {
        delivered += 1;
      });
      await bus.publish([{ detailType: 'StepFailed', detail: {} }]);
      await bus.drain();
      expect(delivered, spec).toBe(times);
    }
  });

  it('is the bus itself when the spec names no bus fault', () => {
    const bus = createLocalEventBus();
    expect(faultyBus(faults('store.read:throttle@1'), bus)).toBe(bus);
  });
});

describe('faultyHandler', () => {
  it('raises the names Step Functions reports, after the work for crash-after', async () => {
    let calls = 0;
    const handler = async () => {
      calls += 1;
      return { ok: true };
    };
    await expect(faultyHandler(faults('lambda.invoke:throttle@1'), 'StepExecutor', handler)({})).rejects.toMatchObject({
      name: 'Lambda.TooManyRequestsException',
    });
    expect(calls).toBe(0);
    await expect(
      faultyHandler(faults('lambda.invoke:crash-after@1'), 'StepExecutor', handler)({}),
    ).rejects.toMatchObject({ name: 'Lambda.ServiceException' });
    expect(calls).toBe(1);
    await expect(faultyHandler(faults('lambda.invoke:timeout@1'), 'Coordinator', handler)({})).rejects.toMatchObject({
      name: 'Sandbox.Timedout',
    });
  });

  it('loses a crash-after answer either way Step Functions reports it: the service error or a process that died', async () => {
    let calls = 0;
    const crashing = faultyHandler(faults('lambda.invoke:crash-after@1', 7), 'Coordinator', async () => {
      calls += 1;
      return { ok: true };
    });
    const names = new Set<string>();
    for (let i = 0; i < 20; i++)
      names.add(
        await crashing({}).then(
          () => 'answered',
          (error: Error) => error.name,
        ),
      );
    expect([...names].sort()).toEqual(['Lambda.ServiceException', 'Lambda.Unknown']);
    expect(calls).toBe(20);
  });
});
