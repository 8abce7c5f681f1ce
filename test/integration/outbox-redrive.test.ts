/**
 * The outbox redrive on the embedded stack: the relay fails every try of the batch that announces a run's end, so
 * the stream keeps that batch in its journal instead of dropping it; one pass of the redrive publishes the run's
 * events that were held back, each once on the bus and once in the audit log, and the next pass finds nothing.
 */
import { describe, expect, it } from 'vitest';
import type { LocalHandler } from '../../infra/local/local-executions.ts';
import type { BusEnvelope } from '../../shared/adapters/local/event-bus.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { outboxOf, type StreamRecord } from '../../shared/events/outbox.ts';
import { plan, step, useTestStack, waitForRun } from '../support/local-stack.ts';

let relayDown = true;
let refused = 0;
const announcesEnd = (records: readonly StreamRecord[]) =>
  records.some((record) => outboxOf(record)?.events.some((event) => event.type === 'RunFinished'));

const stack = useTestStack({
  // No timer: the passes are the test's.
  outboxRedrive: { everyMs: 0 },
  wrapHandler: (key, handler): LocalHandler =>
    key !== 'Outbox'
      ? handler
      : async (records) => {
          if (relayDown && announcesEnd(records as readonly StreamRecord[])) {
            refused += 1;
            throw new Error('the relay is down for this announcement');
          }
          return handler(records);
        },
});

describe('the outbox redrive, embedded', () => {
  it('publishes a run’s events its relay failed exactly once after a redrive; a second pass finds nothing', async () => {
    const seen: BusEnvelope[] = [];
    stack.bus.subscribe({ source: ['cairn'] }, (event) => {
      seen.push(event);
    });
    const runId = await stack.startRun({
      plan: plan('announced while the relay fails', [
        step(stack, 'a', T.echo, { input: { value: 'a' } }),
        step(stack, 'b', T.echo, { dependsOn: ['a'], input: { value: 'b' } }),
      ]),
    });
    await waitForRun(stack, runId);
    const ofRun = () => seen.filter((event) => event.detail.runId === runId).map((e) => e['detail-type']);
    // The stream tried the batch every time it does, then kept it: the run's end is neither published nor audited.
    expect(refused).toBeGreaterThanOrEqual(5);
    expect(ofRun()).not.toContain('RunFinished');
    const before = await stack.store.listEvents(runId);
    expect(before.map((event) => event.type)).not.toContain('RunFinished');

    relayDown = false;
    const first = await stack.redriveOutbox();
    await stack.settled();

    expect(first).toEqual({ found: 1, relayed: 1, failed: 0 });
    const audit = await stack.store.listEvents(runId);
    expect(audit.map((event) => event.type)).toContain('RunFinished');
    expect(audit.length).toBeGreaterThan(before.length);
    // Each of the run's events on the bus once: as many as the audit log holds, RunFinished among them once.
    expect(ofRun()).toHaveLength(audit.length);
    expect(ofRun().filter((type) => type === 'RunFinished')).toHaveLength(1);
    expect(ofRun().sort()).toEqual(audit.map((event) => event.type).sort());

    const second = await stack.redriveOutbox();
    await stack.settled();
    expect(second).toEqual({ found: 0, relayed: 0, failed: 0 });
    expect(ofRun()).toHaveLength(audit.length);
  });
});
