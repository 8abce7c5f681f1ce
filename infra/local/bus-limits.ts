/**
 * EventBridge's PutEvents limits on the embedded bus. The deployed publisher (adapters/aws/eventbridge-publisher.ts)
 * puts a call's events in requests of 10; this bus takes the same requests and refuses, as EventBridge does, one
 * whose entries add up to more than 256 KB (aws-limits.ts): the request throws a `ValidationException` and none of
 * its events is delivered, while the requests before it were. So an event cairn could publish embedded but not on
 * AWS fails here too, where a test sees it.
 */
import type { LocalEventBus } from '../../shared/adapters/local/event-bus.ts';
import { EVENT_SOURCE } from '../../shared/ports/events.ts';
import { AWS_LIMITS, checkPutEvents } from './aws-limits.ts';

export function withPutEventsLimits(bus: LocalEventBus, source: string = EVENT_SOURCE): LocalEventBus {
  return {
    async publish(events) {
      for (let i = 0; i < events.length; i += AWS_LIMITS.putEventsEntries) {
        const request = events.slice(i, i + AWS_LIMITS.putEventsEntries);
        checkPutEvents(
          request.map((event) => ({
            Source: source,
            DetailType: event.detailType,
            Detail: JSON.stringify(event.detail),
          })),
        );
        await bus.publish(request);
      }
    },
    subscribe: (pattern, subscriber) => bus.subscribe(pattern, subscriber),
    drain: () => bus.drain(),
  };
}
