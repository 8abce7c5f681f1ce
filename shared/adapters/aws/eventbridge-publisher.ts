/**
 * EventPublisher on Amazon EventBridge: PutEvents onto the stack's own bus, source `cairn`, in requests filled under
 * both of the API's limits, 10 entries and 256 KB together (events/put-events.ts), so that large events never make
 * a request EventBridge refuses whole. An event over 256 KB alone is left out and reported, after the others are
 * put, as a non-retryable `EventTooLargeError`. A partial failure (FailedEntryCount > 0) is an error for the caller
 * to retry: delivery is at least once, and every consumer tolerates duplicates.
 */
import { type EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { CairnError } from '../../errors.ts';
import { PUT_EVENTS_LIMITS, type PutEventsLimits, putInRequests } from '../../events/put-events.ts';
import { type DomainEvent, EVENT_SOURCE, type EventPublisher } from '../../ports/events.ts';
import { eventBridgeClient } from './clients.ts';

export interface EventBridgePublisherOptions {
  readonly eventBusName: string;
  /** Defaults to a client from the Lambda environment. */
  readonly client?: EventBridgeClient;
  readonly source?: string;
  /** PutEvents' limits; only tests lower them. */
  readonly limits?: PutEventsLimits;
}

export function createEventBridgePublisher(options: EventBridgePublisherOptions): EventPublisher {
  const source = options.source ?? EVENT_SOURCE;
  const client = options.client ?? eventBridgeClient();
  return {
    async publish(events: readonly DomainEvent[]): Promise<void> {
      await putInRequests(
        events,
        source,
        async (request) => {
          const entries: PutEventsRequestEntry[] = request.map(({ entry }) => ({
            EventBusName: options.eventBusName,
            Source: entry.Source,
            DetailType: entry.DetailType,
            Detail: entry.Detail,
          }));
          const answer = await client.send(new PutEventsCommand({ Entries: entries }));
          const failed = answer.FailedEntryCount ?? 0;
          if (failed > 0) {
            const reasons = (answer.Entries ?? [])
              .map((entry, index) =>
                entry.ErrorCode ? `${request[index]?.event.detailType}: ${entry.ErrorCode}` : undefined,
              )
              .filter((reason): reason is string => reason !== undefined);
            throw new CairnError('EventPublishError', `EventBridge rejected ${failed} of ${request.length} events`, {
              retryable: true,
              context: { eventBusName: options.eventBusName, reasons },
            });
          }
        },
        options.limits ?? PUT_EVENTS_LIMITS,
      );
    },
  };
}
