import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEventBridgePublisher } from '../../../../shared/adapters/aws/eventbridge-publisher.ts';
import type { DomainEvent } from '../../../../shared/ports/events.ts';

const eventbridge = mockClient(EventBridgeClient);

const events = (n: number): DomainEvent[] =>
  Array.from({ length: n }, (_, i) => ({ detailType: 'StepSucceeded', detail: { runId: 'r1', stepId: `s${i}` } }));

describe('createEventBridgePublisher', () => {
  beforeEach(() => eventbridge.reset());

  it('puts each event on the bus with source cairn and the detail as JSON', async () => {
    eventbridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{ EventId: '1' }] });
    const publisher = createEventBridgePublisher({ client: new EventBridgeClient({}), eventBusName: 'cairn-bus' });

    await publisher.publish(events(1));

    expect(eventbridge.commandCalls(PutEventsCommand)[0]?.args[0].input).toEqual({
      Entries: [
        {
          EventBusName: 'cairn-bus',
          Source: 'cairn',
          DetailType: 'StepSucceeded',
          Detail: JSON.stringify({ runId: 'r1', stepId: 's0' }),
        },
      ],
    });
  });

  it('splits 23 events into calls of at most 10 entries', async () => {
    eventbridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0 });
    const publisher = createEventBridgePublisher({ client: new EventBridgeClient({}), eventBusName: 'b' });

    await publisher.publish(events(23));

    const sizes = eventbridge.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries?.length);
    expect(sizes).toEqual([10, 10, 3]);
  });

  it('throws a retryable error naming the rejected events when some entries fail', async () => {
    eventbridge.on(PutEventsCommand).resolves({
      FailedEntryCount: 1,
      Entries: [{ EventId: '1' }, { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' }],
    });
    const publisher = createEventBridgePublisher({ client: new EventBridgeClient({}), eventBusName: 'b' });

    await expect(publisher.publish(events(2))).rejects.toMatchObject({
      name: 'EventPublishError',
      retryable: true,
      context: { reasons: ['StepSucceeded: ThrottlingException'] },
    });
  });

  it('makes no call when there is nothing to publish', async () => {
    const publisher = createEventBridgePublisher({ client: new EventBridgeClient({}), eventBusName: 'b' });
    await publisher.publish([]);
    expect(eventbridge.commandCalls(PutEventsCommand)).toHaveLength(0);
  });
});
