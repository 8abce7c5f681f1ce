/**
 * The rules that drive cairn (shared/events/bus-rules.ts) on the embedded bus: each rule's EventBridge pattern is
 * subscribed to the handler of its target, the same `createHandler(deps)` the deployed rule invokes, so what is
 * tested locally is what is deployed. Like an EventBridge rule with a retry policy, a failed delivery is tried
 * again a few times (every target tolerates duplicates); what still fails goes to the bus's error report.
 */
import type { BusEnvelope, LocalEventBus } from '../../shared/adapters/local/event-bus.ts';
import { BUS_RULES, type BusRule } from '../../shared/events/bus-rules.ts';

export type BusRuleHandler = (event: BusEnvelope) => Promise<unknown>;
/** One handler per rule target; a target without a handler gets no subscription. */
export type BusRuleHandlers = Readonly<Partial<Record<BusRule['target'], BusRuleHandler>>>;

export interface SubscribeOptions {
  readonly rules?: readonly BusRule[];
  /** Deliveries per event, the first included (default 3). */
  readonly attempts?: number;
  /** Pause before the n-th retry: `retryDelayMs * n` (default 50). */
  readonly retryDelayMs?: number;
}

/** Subscribes every rule whose target has a handler; returns a function that removes those subscriptions. */
export function subscribeBusRules(
  bus: Pick<LocalEventBus, 'subscribe'>,
  handlers: BusRuleHandlers,
  options: SubscribeOptions = {},
): () => void {
  const attempts = Math.max(1, options.attempts ?? 3);
  const delay = options.retryDelayMs ?? 50;
  const unsubscribers = (options.rules ?? BUS_RULES).flatMap((rule) => {
    const handler = handlers[rule.target];
    if (!handler) return [];
    return [
      bus.subscribe(rule.pattern, async (event) => {
        for (let attempt = 1; ; attempt++) {
          try {
            await handler(event);
            return;
          } catch (error) {
            if (attempt >= attempts) throw error;
            await new Promise((resolve) => setTimeout(resolve, delay * attempt));
          }
        }
      }),
    ];
  });
  return () => {
    for (const unsubscribe of unsubscribers) unsubscribe();
  };
}
