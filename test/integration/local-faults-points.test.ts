/**
 * The fault points of the embedded runtime besides the store (infra/local/faults): each one really happens (its
 * count rises), and the engine copes where it should — the bus's consumers stay idempotent under duplicated and
 * redelivered events, a lost Lambda answer or a duplicated start never runs a step twice, a capability's transient
 * failures are retried, and an eventually consistent index read is stale while consistent reads are not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerEntries, CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { injected, startFaultyStack, startRunDespiteFaults, waitDespiteFaults } from '../support/faulty-stack.ts';
import { type LocalStack, plan, step, stepOf, summary } from '../support/local-stack.ts';
import { createReplanPack, PROVIDERS } from '../support/replan-pack.ts';

/** A diamond with a side effect on one branch. */
const diamond = (stack: LocalStack, objective: string, fields: { maxRetries?: number } = {}) =>
  plan(objective, [
    step(stack, 'A', T.echo, { input: { value: 'a' }, ...fields }),
    step(stack, 'B', T.ledger, {
      dependsOn: ['A'],
      input: { entry: objective },
      rollbackHint: 'remove the entry',
      ...fields,
    }),
    step(stack, 'C', T.echo, { dependsOn: ['A'], input: { value: 'c' }, ...fields }),
    step(stack, 'D', T.echo, { dependsOn: ['B', 'C'], input: { value: 'd' }, ...fields }),
  ]);

async function completesOnce(stack: LocalStack, objective: string, fields: { maxRetries?: number } = {}) {
  const runId = await startRunDespiteFaults(stack, { plan: diamond(stack, objective, fields) });
  const done = await waitDespiteFaults(stack, runId);
  expect(done.status, `${summary(done)} ${JSON.stringify(done.terminal)}`).toBe('complete');
  expect(ledgerEntries().filter((entry) => entry.runId === runId)).toHaveLength(1);
  return done;
}

describe('bus.deliver: duplicate and drop-once', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    const pack = createReplanPack();
    // Every delivery is duplicated or dropped once and redelivered 50 ms later.
    stack = await startFaultyStack('bus.deliver:duplicate@0.5,bus.deliver:drop-once=50@1', 3, {
      extraCapabilities: pack,
      limits: { maxReplans: 3 },
    });
  }, 120_000);
  afterAll(() => stack?.close());

  it('replans a failed step once although the replanner hears every failure twice or late', async () => {
    const runId = await stack.startRun({
      plan: plan('bus faults', [
        step(stack, 'A', T.echo, { input: { value: 'a' } }),
        step(stack, 'B', PROVIDERS.primary, { dependsOn: ['A'], input: { value: 'B', fail: ['primary'] } }),
      ]),
    });
    const done = await waitDespiteFaults(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    expect(done.revision).toBe(2);
    expect(stepOf(done, 'B')).toMatchObject({ generation: 2, output: { provider: 'secondary' } });
    const { json } = await stack.request('GET', `/runs/${runId}/events`);
    const revised = (json as { events: { type: string }[] }).events.filter((e) => e.type === 'PlanRevised');
    expect(revised).toHaveLength(1);
    const fired = injected(stack);
    expect((fired['bus.deliver:duplicate'] ?? 0) + (fired['bus.deliver:drop-once'] ?? 0)).toBeGreaterThan(0);
  }, 90_000);
});

describe('lambda.invoke: throttle, timeout, crash-after', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startFaultyStack(
      'lambda.invoke:throttle@0.1,lambda.invoke:timeout@0.1,lambda.invoke:crash-after@0.2',
      21,
    );
  }, 120_000);
  afterAll(() => stack?.close());

  it('loses answers of handlers that did their work, and no step is executed twice in the ledger', async () => {
    await completesOnce(stack, 'lambda faults');
    await completesOnce(stack, 'lambda faults again');
    const fired = injected(stack);
    expect(fired['lambda.invoke:crash-after'], JSON.stringify(fired)).toBeGreaterThan(0);
    expect(fired['lambda.invoke:timeout'], JSON.stringify(fired)).toBeGreaterThan(0);
  }, 120_000);
});

describe('sfn.start: throttle and duplicate', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startFaultyStack('sfn.start:throttle@0.2,sfn.start:duplicate@1', 5);
  }, 120_000);
  afterAll(() => stack?.close());

  it('starts every execution twice or not at all, and each step still runs once', async () => {
    const done = await completesOnce(stack, 'start faults');
    expect(done.steps.map((s) => s.attempts)).toEqual([1, 1, 1, 1]);
    const fired = injected(stack);
    expect(fired['sfn.start:duplicate']).toBeGreaterThan(0);
    expect(fired['sfn.start:throttle']).toBeGreaterThan(0);
  }, 90_000);
});

describe('capability.call: timeout and error', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startFaultyStack('capability.call:timeout@0.3,capability.call:error@0.2', 13);
  }, 120_000);
  afterAll(() => stack?.close());

  it('retries transient capability failures as attempts, and makes the side effect once', async () => {
    const done = await completesOnce(stack, 'capability faults', { maxRetries: 8 });
    expect(done.steps.some((s) => s.attempts > 1)).toBe(true);
    const fired = injected(stack);
    expect((fired['capability.call:timeout'] ?? 0) + (fired['capability.call:error'] ?? 0)).toBeGreaterThan(0);
  }, 90_000);
});

describe('index.read: lag', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startFaultyStack('index.read:lag=400@1', 1);
  }, 120_000);
  afterAll(() => stack?.close());

  const listed = async (runId: string): Promise<boolean> => {
    const { status, json } = await stack.request('GET', '/runs?limit=100');
    expect(status).toBe(200);
    return (json as { runs: { runId: string }[] }).runs.some((run) => run.runId === runId);
  };

  it('leaves a new run out of the index for a while, never out of a consistent read', async () => {
    const runId = await stack.startRun({
      plan: plan('lagging index', [step(stack, 'A', T.echo, { input: { value: 1 } })]),
    });
    expect(await listed(runId)).toBe(false);
    expect((await stack.request('GET', `/runs/${runId}`)).status).toBe(200);
    await waitDespiteFaults(stack, runId);
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(await listed(runId)).toBe(true);
    expect(injected(stack)['index.read:lag']).toBeGreaterThan(0);
  });
});
