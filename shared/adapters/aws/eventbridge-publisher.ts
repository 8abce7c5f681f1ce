/**
 * EventPublisher on Amazon EventBridge: PutEvents in batches of 10 (the API's limit), source `cairn`, onto the
 * stack's own bus. A partial failure (FailedEntryCount > 0) is an error for the caller to retry: delivery is at least
 * once, and every consumer tolerates duplicates.
 */
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { CairnError } from '../../errors.ts';
import { type DomainEvent, EVENT_SOURCE, type EventPublisher } from '../../ports/events.ts';

const MAX_ENTRIES_PER_CALL = 10;

export interface EventBridgePublisherOptions {
  readonly eventBusName: string;
  /** Defaults to a client from the Lambda environment. */
  readonly client?: EventBridgeClient;
  readonly source?: string;
}

export function createEventBridgePublisher(options: EventBridgePublisherOptions): EventPublisher {
  const source = options.source ?? EVENT_SOURCE;
  const client = options.client ?? new EventBridgeClient({});
  return {
    async publish(events: readonly DomainEvent[]): Promise<void> {
      for (let i = 0; i < events.length; i += MAX_ENTRIES_PER_CALL) {
        const batch = events.slice(i, i + MAX_ENTRIES_PER_CALL);
        const entries: PutEventsRequestEntry[] = batch.map((event) => ({
          EventBusName: options.eventBusName,
          Source: source,
          DetailType: event.detailType,
          Detail: JSON.stringify(event.detail),
        }));
        const answer = await client.send(new PutEventsCommand({ Entries: entries }));
        const failed = answer.FailedEntryCount ?? 0;
        if (failed > 0) {
          const reasons = (answer.Entries ?? [])
            .map((entry, index) => (entry.ErrorCode ? `${batch[index]?.detailType}: ${entry.ErrorCode}` : undefined))
            .filter((reason): reason is string => reason !== undefined);
          throw new CairnError('EventPublishError', `EventBridge rejected ${failed} of ${batch.length} events`, {
            retryable: true,
            context: { eventBusName: options.eventBusName, reasons },
          });
        }
      }
    },
  };
}
