/**
 * One behaviour suite for the EventPublisher port, run against every adapter: the EventBridge publisher (mocked
 * PutEvents) and the embedded bus. What a consumer of cairn's events may rely on, wherever they run.
 */
import { describe, expect, it } from 'vitest';
import type { DomainEvent, EventPublisher } from '../../shared/ports/events.ts';

export interface DeliveredEvent {
  readonly source: string;
  readonly detailType: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface PublisherUnderTest {
  readonly publisher: EventPublisher;
  /** Everything that reached the bus so far, in the order it got there. */
  delivered(): Promise<DeliveredEvent[]>;
}

const stepEvent = (i: number): DomainEvent => ({
  detailType: i % 2 === 0 ? 'StepSucceeded' : 'StepFailed',
  detail: { runId: 'run-1', stepId: `s${i}`, generation: 1, nested: { list: [i, { deep: true }] } },
});

export function describeEventPublisherBehaviour(name: string, make: () => PublisherUnderTest): void {
  describe(`EventPublisher behaviour: ${name}`, () => {
    it('delivers each event with source cairn, its detail-type and its detail unchanged', async () => {
      const subject = make();

      await subject.publisher.publish([stepEvent(0)]);

      expect(await subject.delivered()).toEqual([
        { source: 'cairn', detailType: 'StepSucceeded', detail: stepEvent(0).detail },
      ]);
    });

    it('delivers a batch larger than one PutEvents call, in order, none lost or doubled', async () => {
      const subject = make();
      const events = Array.from({ length: 23 }, (_, i) => stepEvent(i));

      await subject.publisher.publish(events);

      const delivered = await subject.delivered();
      expect(delivered.map((e) => e.detail.stepId)).toEqual(events.map((e) => e.detail.stepId));
    });

    it('delivers nothing for an empty batch', async () => {
      const subject = make();

      await subject.publisher.publish([]);

      expect(await subject.delivered()).toEqual([]);
    });
  });
}
