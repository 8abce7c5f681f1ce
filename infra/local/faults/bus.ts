/**
 * `bus.deliver`: faults on each delivery of an event to a subscriber (one EventBridge target), the kinds of delivery
 * EventBridge's at-least-once promise allows. `duplicate`: delivered twice. `delay`: delivered late (up to the
 * rule's duration). `drop-once`: the first delivery is lost and the event comes again after the rule's duration, as
 * EventBridge's retries bring it. Deliveries held back are part of `drain()`, so a settled stack has made them.
 */
import type { BusEnvelope, BusSubscriber, LocalEventBus } from '../../../shared/adapters/local/event-bus.ts';
import type { FaultInjector } from './injector.ts';

/** A duplicate comes right after the first delivery, or a little later (up to this), while it may still run. */
const DUPLICATE_WITHIN_MS = 20;

export function faultyBus(
  faults: FaultInjector,
  bus: LocalEventBus,
  onError: (error: unknown, event: BusEnvelope) => void = () => {},
): LocalEventBus {
  if (!faults.covers('bus.deliver')) return bus;
  const later = new Set<Promise<void>>();

  const deliverLater = (subscriber: BusSubscriber, event: BusEnvelope, ms: number): void => {
    const delivery = new Promise<void>((resolve) => setTimeout(resolve, ms))
      .then(() => subscriber(event))
      .catch((error: unknown) => onError(error, event))
      .finally(() => later.delete(delivery));
    later.add(delivery);
  };

  const deliver = async (subscriber: BusSubscriber, event: BusEnvelope): Promise<void> => {
    const rule = faults.draw('bus.deliver');
    if (rule === undefined) return subscriber(event);
    const detail = faults.detail('bus.deliver');
    switch (rule.fault) {
      case 'duplicate':
        deliverLater(subscriber, event, Math.floor(detail * DUPLICATE_WITHIN_MS));
        return subscriber(event);
      case 'delay':
        deliverLater(subscriber, event, Math.floor(detail * (rule.durationMs ?? 0)));
        return;
      case 'drop-once':
        deliverLater(subscriber, event, rule.durationMs ?? 0);
        return;
    }
  };

  return {
    publish: (events) => bus.publish(events),
    subscribe: (pattern, subscriber) => bus.subscribe(pattern, (event) => deliver(subscriber, event)),
    async drain() {
      await bus.drain();
      while (later.size > 0) {
        await Promise.allSettled([...later]);
        await bus.drain();
      }
    },
  };
}
