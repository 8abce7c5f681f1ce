/**
 * `store.write` and `store.read` faults on the embedded stack (infra/local/faults/store.ts): the store's calls are
 * throttled or time out (made or not, seeded) below the adapter, as DynamoDB's would once the SDK gave up, and small
 * plans still run to the end through the synthesized state machines, with each side effect made once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerEntries, CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { injected, startFaultyStack, startRunDespiteFaults, waitDespiteFaults } from '../support/faulty-stack.ts';
import { type LocalStack, plan, step, summary } from '../support/local-stack.ts';

/** A diamond with a side effect on one branch. */
const diamond = (stack: LocalStack, objective: string) =>
  plan(objective, [
    step(stack, 'A', T.echo, { input: { value: 'a' } }),
    step(stack, 'B', T.ledger, { dependsOn: ['A'], input: { entry: objective }, rollbackHint: 'remove the entry' }),
    step(stack, 'C', T.echo, { dependsOn: ['A'], input: { value: 'c' } }),
    step(stack, 'D', T.echo, { dependsOn: ['B', 'C'], input: { value: 'd' } }),
  ]);

async function runsToTheEnd(stack: LocalStack, objective: string): Promise<void> {
  const runId = await startRunDespiteFaults(stack, { plan: diamond(stack, objective) });
  const done = await waitDespiteFaults(stack, runId);
  expect(done.status, `${summary(done)} ${JSON.stringify(done.terminal)}`).toBe('complete');
  expect(done.steps.map((s) => s.attempts)).toEqual([1, 1, 1, 1]);
  expect(ledgerEntries().filter((entry) => entry.runId === runId)).toHaveLength(1);
}

describe('store.write:throttle', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startFaultyStack('store.write:throttle@0.2', 7);
  }, 120_000);
  afterAll(() => stack?.close());

  it('throttles writes, and a small plan still completes with its side effect made once', async () => {
    await runsToTheEnd(stack, 'write throttles');
    expect(injected(stack)['store.write:throttle']).toBeGreaterThan(0);
  }, 90_000);
});
describe('store.read: throttle and timeout', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startFaultyStack('store.read:throttle@0.1,store.read:timeout@0.1', 11);
  }, 120_000);
  afterAll(() => stack?.close());

  it('refuses or drops some reads, and a small plan still completes with its side effect made once', async () => {
    await runsToTheEnd(stack, 'read faults');
    await runsToTheEnd(stack, 'read faults again');
    const fired = injected(stack);
    expect(fired['store.read:timeout']).toBeGreaterThan(0);
    expect(fired['store.read:throttle']).toBeGreaterThan(0);
  }, 120_000);
});
