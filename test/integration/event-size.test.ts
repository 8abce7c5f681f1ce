/**
 * Event details that would grow with the plan, through the embedded stack with EventBridge's PutEvents limit
 * lowered (bus-limits.ts fills requests as the deployed publisher does, and refuses what EventBridge refuses): an
 * invalidation of more steps than one event can name is announced in parts, each within the limit, and a step
 * blocked by many failed upstream steps names a sample of them.
 */
import { describe, expect, it } from 'vitest';
import { putEventsEntryBytes } from '../../infra/local/aws-limits.ts';
import type { BusEnvelope } from '../../shared/adapters/local/event-bus.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { BLOCKED_BY_SAMPLE } from '../../shared/events/bounded-details.ts';
import { parseEventDetail } from '../../shared/events/catalog.ts';
import { plan, type RunView, step, summary, useTestStack, waitForRun } from '../support/local-stack.ts';

/** Over one part's 4 KB of ids, under one StepsInvalidated naming 81 ids of 64 characters (5.4 KB). */
const LOWERED = { entries: 10, bytes: 5 * 1024 };
const FAN_OUT = 80;

const failures: string[] = [];
const stack = useTestStack({
  limits: { maxSteps: FAN_OUT + 10 },
  putEventsLimits: LOWERED,
  onExecutionError: (message) => failures.push(message),
});

const seen: BusEnvelope[] = [];
let subscribed = false;
function watchBus(): void {
  if (subscribed) return;
  subscribed = true;
  stack.bus.subscribe({ source: ['cairn'] }, (event) => {
    seen.push(event);
  });
}

/** A step id of 64 characters, the longest a plan allows. */
const longId = (i: number) => `s${String(i).padStart(63, '0')}`;

const entryBytes = (event: BusEnvelope) =>
  putEventsEntryBytes({ Source: event.source, DetailType: event['detail-type'], Detail: JSON.stringify(event.detail) });

const finished = (run: RunView) => ['complete', 'failed', 'cancelled'].includes(run.status);

describe('an invalidation of more steps than one event can name', () => {
  it('is announced in parts, each within the PutEvents limit, that name every step once', async () => {
    watchBus();
    const ids = Array.from({ length: FAN_OUT }, (_, i) => longId(i));
    const runId = await stack.startRun({
      plan: plan('fan out', [
        step(stack, 'root', T.echo, { input: { value: 'root' } }),
        ...ids.map((id) => step(stack, id, T.echo, { input: { value: 1 }, dependsOn: ['root'] })),
      ]),
    });
    const done = await waitForRun(stack, runId, finished, 120_000);
    expect(done.status, summary(done)).toBe('complete');

    const answer = await stack.request('POST', `/runs/${runId}/steps/root/invalidate`, { reason: 'root changed' });
    expect(answer.status).toBe(202);
    const again = await waitForRun(
      stack,
      runId,
      (run) => finished(run) && run.steps.every((s) => s.generation === 2),
      120_000,
    );
    expect(again.status, summary(again)).toBe('complete');
    await stack.settled();

    const published = seen.filter((e) => e['detail-type'] === 'StepsInvalidated' && e.detail.runId === runId);
    expect(published.length).toBeGreaterThan(1);
    for (const event of published) {
      expect(entryBytes(event)).toBeLessThanOrEqual(LOWERED.bytes);
      expect(parseEventDetail('StepsInvalidated', event.detail).ok).toBe(true);
      expect(event.detail).toMatchObject({ parts: published.length, total: FAN_OUT + 1, reason: 'root changed' });
    }
    const named = published.flatMap((e) => e.detail.stepIds as string[]);
    expect(named.sort()).toEqual(['root', ...ids].sort());
    const audit = (await stack.store.listEvents(runId)).filter((e) => e.type === 'StepsInvalidated');
    expect(audit).toHaveLength(published.length);
    expect(failures).toEqual([]);
  }, 300_000);
});

describe('a step blocked by many failed upstream steps', () => {
  it('names a sample of the causes and counts them all, in its event and its error', async () => {
    watchBus();
    const causes = Array.from({ length: 30 }, (_, i) => `f${i}`);
    const runId = await stack.startRun({
      plan: plan('fan in', [
        ...causes.map((id) => step(stack, id, T.fail, { input: { message: 'no', retryable: false } })),
        step(stack, 'z', T.echo, { input: { value: 'z' }, dependsOn: causes }),
      ]),
    });
    const done = await waitForRun(stack, runId, finished, 120_000);
    expect(done.status, summary(done)).toBe('failed');

    // Invalidating z alone: its new generation waits on 30 failed steps outside the scope, so it is blocked by all.
    const answer = await stack.request('POST', `/runs/${runId}/steps/z/invalidate`, {});
    expect(answer.status).toBe(202);
    await waitForRun(stack, runId, (run) => finished(run) && run.steps.some((s) => s.id === 'z' && s.generation === 2));
    await stack.settled();

    const blocked = seen.filter(
      (e) => e['detail-type'] === 'StepBlocked' && e.detail.runId === runId && e.detail.generation === 2,
    );
    expect(blocked).toHaveLength(1);
    const detail = blocked[0]?.detail ?? {};
    expect(parseEventDetail('StepBlocked', detail).ok).toBe(true);
    expect(detail.blockedBy).toHaveLength(BLOCKED_BY_SAMPLE);
    expect(detail.blockedByCount).toBe(causes.length);
    const z = await stack.store.getStep(runId, 'z');
    expect(z?.error?.message).toMatch(new RegExp(`and ${causes.length - BLOCKED_BY_SAMPLE} more did not succeed$`));
  }, 300_000);
});

describe('a step skipped by a long when expression', () => {
  it('publishes its StepSkipped with the expression clipped in the reason', async () => {
    watchBus();
    const when = `{% $length("${'w'.repeat(6000)}") < 0 %}`;
    const runId = await stack.startRun({
      plan: plan('long when', [
        step(stack, 'first', T.echo, { input: { value: 1 } }),
        step(stack, 'maybe', T.echo, { input: { value: 2 }, when }),
      ]),
    });
    const done = await waitForRun(stack, runId, finished, 120_000);
    expect(done.steps.find((s) => s.id === 'maybe')?.status, summary(done)).toBe('skipped');

    const skipped = seen.filter((e) => e['detail-type'] === 'StepSkipped' && e.detail.runId === runId);
    expect(skipped).toHaveLength(1);
    expect(entryBytes(skipped[0] as BusEnvelope)).toBeLessThanOrEqual(LOWERED.bytes);
    expect(String(skipped[0]?.detail.reason).length).toBeLessThan(600);
  }, 300_000);
});
