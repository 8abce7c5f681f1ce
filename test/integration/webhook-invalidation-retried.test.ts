/**
 * A signed webhook that invalidates a run's ROOT step, through the embedded stack, when the invalidation's store
 * calls keep failing. A webhook's invalidation has fewer chances than one asked for through the API: the API's client
 * retries a 5xx many times under its Idempotency-Key, but a ResourceChanged reaches the invalidator three times at most
 * (EventBridge's target, then Lambda's two async retries), and each try is many store calls long, any of which may
 * fail. Once the deliveries were spent part-way, the root's new generation stayed `ready` with no execution, its
 * dependents `pending` (or still on their older generation, which had run from the root's old one), and the run,
 * reopened, stayed `running` for good (chaos seeds 11 and 14).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { settingsFromEnv } from '../../shared/config/settings.ts';
import { signWebhook } from '../../shared/webhooks/signature.ts';
import {
  executedGenerations,
  plan,
  type RunView,
  statusOf,
  step,
  summary,
  waitForRun,
} from '../support/local-stack.ts';
import { type Call, useStackWithFaults } from '../support/stack-faults.ts';

const SOURCE = 'repos';
const SECRET = 'webhook-root-secret';
const { stack, faults } = useStackWithFaults({
  settings: settingsFromEnv({ ...process.env, CAIRN_WEBHOOK_SECRETS: JSON.stringify({ [SOURCE]: SECRET }) }),
});

/** More failures of one call than the bus has deliveries of the event (3). */
const MORE_THAN_DELIVERIES = 4;

const echo = (id: string, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });

/** The signed POST a watched system sends when `resourceKey` changed. */
async function postWebhook(resourceKey: string): Promise<number> {
  const body = JSON.stringify({ resourceKey });
  const headers = signWebhook(SECRET, new TextEncoder().encode(body), Math.floor(Date.now() / 1000));
  const response = await fetch(`${stack.url}/webhooks/${SOURCE}`, { method: 'POST', body, headers });
  return response.status;
}

/** A finished run: root r (watching `key`) → a, r → b. */
async function finishedRun(objective: string, key: string): Promise<string> {
  const runId = await stack.startRun({
    plan: plan(objective, [
      echo('r', { watches: [key] }),
      echo('a', { dependsOn: ['r'] }),
      echo('b', { dependsOn: ['r'] }),
    ]),
  });
  const done = await waitForRun(stack, runId);
  expect(done.status, summary(done)).toBe('complete');
  return runId;
}

/** A running run: root r (watching `key`) has succeeded, its dependent b sleeps, a has run. */
async function runningRun(objective: string, key: string): Promise<string> {
  const runId = await stack.startRun({
    plan: plan(objective, [
      echo('r', { watches: [key] }),
      echo('a', { dependsOn: ['r'] }),
      step(stack, 'b', T.sleep, { dependsOn: ['r'], input: { ms: 1500 } }),
    ]),
  });
  const sleeping = (run: RunView) => statusOf(run, 'a') === 'succeeded' && statusOf(run, 'b') === 'running';
  const running = await waitForRun(stack, runId, sleeping);
  expect(running.status, summary(running)).toBe('running');
  return runId;
}

const rerun = (run: RunView) =>
  run.status === 'complete' && run.steps.every((s) => s.generation === 2 && s.status === 'succeeded');

/** The run ended (again) with r, a and b each on generation 2, which ran once after generation 1. */
async function expectRootRerun(runId: string): Promise<void> {
  const again = await waitForRun(stack, runId, rerun, 15_000);
  await stack.settled();
  expect(
    again.steps.map((s) => `${s.id}${s.generation}`),
    summary(again),
  ).toEqual(['r2', 'a2', 'b2']);
  expect(executedGenerations(stack, runId)).toEqual({ r: [1, 2], a: [1, 2], b: [1, 2] });
  // No dependent ran from the root's older generation: each one's generation 2 started once r's had succeeded.
  const { json } = await stack.request('GET', `/runs/${runId}/events`);
  const events = (json as { events: AuditEvent[] }).events;
  const at = (type: string, stepId: string) =>
    events.find((e) => e.type === type && e.stepId === stepId && e.generation === 2)?.at ?? 'never';
  const rootDone = at('StepSucceeded', 'r');
  expect(rootDone).not.toBe('never');
  for (const dependent of ['a', 'b']) {
    const started = at('StepStarted', dependent);
    expect(started !== 'never' && started >= rootDone, `${dependent} started ${started}, r done ${rootDone}`).toBe(
      true,
    );
  }
}

interface AuditEvent {
  readonly type: string;
  readonly at: string;
  readonly stepId?: string;
  readonly generation?: number;
}

const about = (runId: string) => (call: Call) => call.runId === runId;

/** Every move of `stepId` to its new generation times out unwritten, once more than the bus has deliveries. */
const loseMoves = (runId: string, stepId: string) =>
  faults.throwOn({
    method: 'startGeneration',
    when: 'before',
    name: 'TimeoutError',
    times: MORE_THAN_DELIVERIES,
    match: (call) => about(runId)(call) && call.args[1] === stepId,
  });

describe("a webhook invalidating a run's root step while the store keeps failing", () => {
  it("starts the root's new generation when every delivery lost the write announcing it", async () => {
    const key = `repo:${randomUUID()}`;
    const runId = await finishedRun('webhook root announce lost', key);
    // The announcement (StepsInvalidated, after every generation moved) gets no answer, the write not made.
    const lost = faults.throwOn({
      method: 'updateRun',
      when: 'before',
      name: 'TimeoutError',
      times: MORE_THAN_DELIVERIES,
      match: (call) => about(runId)(call) && JSON.stringify(call.args[3] ?? {}).includes('StepsInvalidated'),
    });

    expect(await postWebhook(key)).toBe(202);
    // Before: all three deliveries failed there; r stayed ready on generation 2 with no execution, the run running.
    await expectRootRerun(runId);
    expect(lost.count()).toBe(MORE_THAN_DELIVERIES);
  }, 60_000);

  it('moves every dependent before anything runs when every delivery failed part-way through the moves', async () => {
    const key = `repo:${randomUUID()}`;
    const runId = await finishedRun('webhook root moves lost', key);
    const lost = loseMoves(runId, 'b');

    expect(await postWebhook(key)).toBe(202);
    // Before (chaos seed 14 run 52): the run reopened with r ready on generation 2 and never started, and b still
    // on generation 1, which had run from r's first generation: a result of the older generation stood.
    await expectRootRerun(runId);
    expect(lost.count()).toBe(MORE_THAN_DELIVERIES);
  }, 60_000);

  it('starts the root of a running run anew when every delivery failed part-way through the moves', async () => {
    const key = `repo:${randomUUID()}`;
    const runId = await runningRun('webhook root of a running run', key);
    const lost = loseMoves(runId, 'a');

    expect(await postWebhook(key)).toBe(202);
    // Before: r ready on generation 2 and never started, a still on generation 1, b's first generation ended
    // after it was moved: nothing left to move the run, which stayed running.
    await expectRootRerun(runId);
    expect(lost.count()).toBe(MORE_THAN_DELIVERIES);
  }, 60_000);
});

describe("an API invalidation of a run's root step while the store keeps failing", () => {
  it('moves every dependent and reruns the root when one request met failures part-way and was never repeated', async () => {
    const runId = await finishedRun('api root moves lost', `repo:${randomUUID()}`);
    // Fewer failures than the invalidation's tries in place, more than none: the one request must carry it through.
    const lost = loseMoves(runId, 'b');

    const { status } = await stack.request('POST', `/runs/${runId}/steps/r/invalidate`, { reason: 'api, once' });
    // Before: the first failure answered 5xx, the run reopened with r ready on generation 2 and b on generation 1.
    expect(status).toBe(202);
    await expectRootRerun(runId);
    expect(lost.count()).toBe(MORE_THAN_DELIVERIES);
  }, 60_000);
});
