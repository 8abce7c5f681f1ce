import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach } from 'vitest';
import { createEventBridgePublisher } from '../../../shared/adapters/aws/eventbridge-publisher.ts';
import { type BusEnvelope, createLocalEventBus } from '../../../shared/adapters/local/event-bus.ts';
import { type DeliveredEvent, describeEventPublisherBehaviour } from '../../support/event-publisher-behaviour.ts';

const eventbridge = mockClient(EventBridgeClient);
// The suite's unit files share one module graph per worker: a mocked client class must not outlive its file.
afterAll(() => {
  eventbridge.restore();
});
beforeEach(() => {
  eventbridge.reset();
  eventbridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0 });
});

describeEventPublisherBehaviour('EventBridge (mocked PutEvents)', () => ({
  publisher: createEventBridgePublisher({ client: new EventBridgeClient({}), eventBusName: 'cairn-bus' }),
  delivered: async () =>
    eventbridge.commandCalls(PutEventsCommand).flatMap((call) =>
      (call.args[0].input.Entries ?? []).map(
        (entry): DeliveredEvent => ({
          source: entry.Source ?? '',
          detailType: entry.DetailType ?? '',
          detail: JSON.parse(entry.Detail ?? 'null') as Record<string, unknown>,
        }),
      ),
    ),
}));

describeEventPublisherBehaviour('the embedded bus', () => {
  const bus = createLocalEventBus();
  const received: BusEnvelope[] = [];
  bus.subscribe({ source: ['cairn'] }, (event) => {
    received.push(event);
  });
  return {
    publisher: bus,
    delivered: async () => {
      await bus.drain();
      return received.map((e) => ({ source: e.source, detailType: e['detail-type'], detail: e.detail }));
    },
  };
});
