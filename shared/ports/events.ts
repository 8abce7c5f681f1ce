/** Publishing cairn's domain events (EventBridge deployed, the in-process bus embedded). */
export interface DomainEvent {
  readonly detailType: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface EventPublisher {
  publish(events: readonly DomainEvent[]): Promise<void>;
}

export const EVENT_SOURCE = 'cairn';
