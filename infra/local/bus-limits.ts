/**
 * EventBridge's PutEvents limits on the embedded bus. This bus fills its requests exactly as the deployed publisher
 * (adapters/aws/eventbridge-publisher.ts) does, with the same function (events/put-events.ts): at most 10 entries
 * and 256 KB together per request, an event over 256 KB alone left out and reported as `EventTooLargeError` after
 * the others are delivered. Each request then meets EventBridge's own check (aws-limits.ts `checkPutEvents`), which
 * refuses a request over either limit with a `ValidationException` and delivers none of it: the publisher's filling
 * is what keeps that from happening. So an event cairn could publish embedded but not on AWS fails here too, where a
 * test sees it. The limits can be lowered (tests), to see the filling at small sizes.
 */
import type { LocalEventBus } from '../../shared/adapters/local/event-bus.ts';
import { PUT_EVENTS_LIMITS, type PutEventsLimits, putInRequests } from '../../shared/events/put-events.ts';
import { EVENT_SOURCE } from '../../shared/ports/events.ts';
import { checkPutEvents } from './aws-limits.ts';

export function withPutEventsLimits(
  bus: LocalEventBus,
  source: string = EVENT_SOURCE,
  limits: PutEventsLimits = PUT_EVENTS_LIMITS,
): LocalEventBus {
  return {
    async publish(events) {
      await putInRequests(
        events,
        source,
        async (request) => {
          checkPutEvents(
            request.map(({ entry }) => entry),
            limits,
          );
          await bus.publish(request.map(({ event }) => event));
        },
        limits,
      );
    },
    subscribe: (pattern, subscriber) => bus.subscribe(pattern, subscriber),
    drain: () => bus.drain(),
  };
}
