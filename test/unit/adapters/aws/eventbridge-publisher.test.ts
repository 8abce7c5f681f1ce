import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { AWS_LIMITS, checkPutEvents } from '../../../../infra/local/aws-limits.ts';
import { createEventBridgePublisher } from '../../../../shared/adapters/aws/eventbridge-publisher.ts';
import { putEventsEntryBytes } from '../../../../shared/events/put-events.ts';
import type { DomainEvent } from '../../../../shared/ports/events.ts';

const eventbridge = mockClient(EventBridgeClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  eventbridge.restore();
});

/** An event whose PutEvents entry (source `cairn`, detail-type `Big`) is exactly `bytes` bytes. */
function eventOf(bytes: number, runId = 'r1'): DomainEvent {
  const frame = putEventsEntryBytes({ Source: 'cairn', DetailType: 'Big', Detail: JSON.stringify({ runId, pad: '' }) });
  return { detailType: 'Big', detail: { runId, pad: 'x'.repeat(bytes - frame) } };
}

/** EventBridge's own request checks (the embedded bus's, aws-limits.ts) on every PutEvents call. */
function enforceLimits(): void {
  eventbridge.on(PutEventsCommand).callsFake((input: { Entries: { Source: string; DetailType: string }[] }) => {
    checkPutEvents(input.Entries);
    return { FailedEntryCount: 0 };
  });
}

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

  it('splits by total size too: ten events of 30 KB make two requests EventBridge takes, not one it refuses', async () => {
    enforceLimits();
    const publisher = createEventBridgePublisher({ client: new EventBridgeClient({}), eventBusName: 'b' });

    await publisher.publish(Array.from({ length: 10 }, () => eventOf(30 * 1024)));

    const calls = eventbridge.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries ?? []);
    expect(calls.map((entries) => entries.length)).toEqual([8, 2]);
    for (const entries of calls) {
      const bytes = entries.reduce(
        (sum, e) =>
          sum + putEventsEntryBytes({ Source: e.Source ?? '', DetailType: e.DetailType ?? '', Detail: e.Detail }),
        0,
      );
      expect(bytes).toBeLessThanOrEqual(AWS_LIMITS.putEventsBytes);
    }
  });

  it('puts an event of exactly 256 KB alone', async () => {
    enforceLimits();
    const publisher = createEventBridgePublisher({ client: new EventBridgeClient({}), eventBusName: 'b' });

    await publisher.publish([events(1)[0] as DomainEvent, eventOf(AWS_LIMITS.putEventsBytes), ...events(2)]);

    const sizes = eventbridge.commandCalls(PutEventsCommand).map((call) => call.args[0].input.Entries?.length);
    expect(sizes).toEqual([1, 1, 2]);
  });

  it('puts every other event and then names one over 256 KB in a coded error, instead of failing its request', async () => {
    enforceLimits();
    const publisher = createEventBridgePublisher({ client: new EventBridgeClient({}), eventBusName: 'b' });

    const publishing = publisher.publish([...events(3), eventOf(AWS_LIMITS.putEventsBytes + 1, 'r9'), ...events(2)]);

    await expect(publishing).rejects.toMatchObject({
      name: 'EventTooLargeError',
      retryable: false,
      context: {
        code: 'E_EVENT_TOO_LARGE',
        limit: AWS_LIMITS.putEventsBytes,
        events: [{ detailType: 'Big', runId: 'r9', bytes: AWS_LIMITS.putEventsBytes + 1 }],
      },
    });
    const put = eventbridge.commandCalls(PutEventsCommand).flatMap((call) => call.args[0].input.Entries ?? []);
    expect(put.map((e) => e.DetailType)).toEqual(Array(5).fill('StepSucceeded'));
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
