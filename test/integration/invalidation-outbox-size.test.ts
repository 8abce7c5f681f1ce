/**
 * An invalidation of thousands of steps, through the embedded stack (limits raised by configuration): the write on
 * the run that announces StepsInvalidated carries ~90 KB of events. Before, that outbox went out of line whole as
 * any large attribute does, so the item's `outbox` was no longer the string the stream filter and the relay read:
 * the announcement was never published nor recorded. Now its events are kept out of line and the attribute stays a
 * small string naming them (the item no longer grows with the plan), and the relay reads them back: every part is
 * published and recorded, each step named once, as for a small invalidation.
 */
import { describe, expect, it } from 'vitest';
import type { BusEnvelope } from '../../shared/adapters/local/event-bus.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { parseEventDetail } from '../../shared/events/catalog.ts';
import { plan, step, useTestStack } from '../support/local-stack.ts';

/** Dependents of the gate: 3,000 ids of 24 characters (the plan within the API's 1 MB body) name ~80 KB of ids. */
const FAN_OUT = 3000;
const failures: string[] = [];
const stack = useTestStack({
  limits: { maxSteps: FAN_OUT + 10 },
  onExecutionError: (message) => failures.push(message),
});

const longId = (i: number) => `s${String(i).padStart(23, '0')}`;

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 240_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('an invalidation of thousands of steps', () => {
  it('announces every part of StepsInvalidated, on the bus and in the audit log, each step once', async () => {
    const seen: BusEnvelope[] = [];
    stack.bus.subscribe({ source: ['cairn'], 'detail-type': ['StepsInvalidated'] }, (event) => {
      seen.push(event);
    });
    const ids = Array.from({ length: FAN_OUT }, (_, i) => longId(i));
    // The dependents wait behind a gate: their records exist, nothing runs them, so the test costs two steps' work.
    const runId = await stack.startRun({
      plan: plan('a wide invalidation', [
        step(stack, 'root', T.echo, { input: { value: 'root' } }),
        step(stack, 'G', T.approver, { dependsOn: ['root'], approval: { question: 'Go?', timeoutSeconds: 600 } }),
        ...ids.map((id) => ({ ...step(stack, id, T.echo, { input: { value: 1 }, dependsOn: ['G'] }), title: 'd' })),
      ]),
    });
    const gate = async (generation: number) => {
      const g = await stack.store.getStep(runId, 'G');
      return g?.generation === generation && g.status === 'awaiting_approval';
    };
    await until('the gate waits', () => gate(1));

    const answer = await stack.request('POST', `/runs/${runId}/steps/root/invalidate`, { reason: 'root changed' });
    expect(answer.status).toBe(202);
    await until('the gate waits again', () => gate(2));
    await stack.settled();

    const steps = await stack.store.listSteps(runId);
    expect(steps.filter((s) => s.generation === 2)).toHaveLength(FAN_OUT + 2);
    const published = seen.filter((e) => e.detail.runId === runId);
    const parts = published.length;
    expect(parts).toBeGreaterThan(15);
    for (const event of published) {
      expect(parseEventDetail('StepsInvalidated', event.detail).ok).toBe(true);
      expect(event.detail).toMatchObject({ parts, total: FAN_OUT + 2, reason: 'root changed' });
    }
    expect(published.map((e) => e.detail.part).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: parts }, (_, i) => i + 1),
    );
    const named = published.flatMap((e) => e.detail.stepIds as string[]);
    expect(named.sort()).toEqual(['G', 'root', ...ids].sort());
    const audit = (await stack.store.listEvents(runId)).filter((e) => e.type === 'StepsInvalidated');
    expect(audit).toHaveLength(parts);
    expect(failures).toEqual([]);

    expect((await stack.request('POST', `/runs/${runId}/cancel`, {})).status).toBe(200);
  }, 600_000);
});
