/**
 * Invalidations that meet other work of the same run, through the embedded stack's real machines:
 * - two invalidations of one run that overlap: one of a step downstream of the other's, or of the same step again,
 *   while the first one's new generation waits to run. Each step's latest generation runs once, after its upstream steps' latest generations, nothing runs from
 *   a superseded generation, and the ledger holds at most one entry per step generation;
 * - an invalidation that supersedes a gate waiting for a person: the old approval is closed, a decision on it is
 *   410 with a code, and the new generation asks again;
 * - a FailRun (the run machine failing a run whose StartRun spent its retries) repeated late, after an invalidation
 *   reopened the run: it must not fail the run's new opening nor close its new generations;
 * - likewise a step's RunStep that failed it at its claim (before any attempt), repeated late after an invalidation
 *   reopened the run: the step's new generation runs.
 */
import { describe, expect, it } from 'vitest';
import type { LocalHandler } from '../../infra/local/local-executions.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import { type ApprovalView, decide, pendingApproval } from '../support/api-reads.ts';
import { eventually } from '../support/engine-stack.ts';
import { executedGenerations, plan, type RunView, step, stepOf, summary, waitForRun } from '../support/local-stack.ts';
import { useStackWithFaults } from '../support/stack-faults.ts';

/** Runs whose StartRun loses its answer on every try (the work is done, Step Functions hears a service error). */
const startLost = new Set<string>();
/** Per run: FailRun's first answer is lost, and its repeat waits for `release` before it runs. */
const failRunRepeat = new Map<string, { arrived: () => void; released: Promise<void>; ran: () => void }>();

/** Per run: the first RunStep of step F's generation 1 loses its answer, and its repeat waits like FailRun's. */
const runStepRepeat = new Map<string, { arrived: () => void; released: Promise<void>; ran: () => void }>();
const firstRunStepDone = new Set<string>();

/** A late repeat of an invocation: its first try ran and lost its answer, the repeat is held, then runs. */
async function heldRepeat(
  repeats: Map<string, { arrived: () => void; released: Promise<void>; ran: () => void }>,
  runId: string,
  run: () => Promise<unknown>,
): Promise<unknown> {
  const repeat = repeats.get(runId);
  if (repeat === undefined) return run();
  repeats.delete(runId);
  repeat.arrived();
  await repeat.released;
  try {
    return await run();
  } finally {
    repeat.ran();
  }
}

const lateFailRun =
  (key: string, handler: LocalHandler): LocalHandler =>
  async (payload) => {
    const fields = payload as { action?: string; runId?: string; stepId?: string; generation?: number };
    const runId = fields.runId ?? '';
    if (key === 'StepExecutor' && runStepRepeat.has(runId) && fields.stepId === 'F' && fields.generation === 1) {
      if (firstRunStepDone.has(runId)) return heldRepeat(runStepRepeat, runId, () => handler(payload));
      await handler(payload);
      firstRunStepDone.add(runId);
      const error = new Error('injected: the answer of RunStep was lost');
      error.name = 'Lambda.ServiceException';
      throw error;
    }
    if (key !== 'Coordinator') return handler(payload);
    if (fields.action === 'startRun' && startLost.has(runId)) {
      await handler(payload);
      // The function died after its work (Lambda.Unknown): retried, then caught into FailRun. A service error would
      // wait for capacity instead (infra/constructs/state-machines.ts, CAPACITY_ERRORS).
      const error = new Error('injected: the answer of StartRun was lost');
      error.name = 'Lambda.Unknown';
      throw error;
    }
    if (fields.action !== 'failRun' || !failRunRepeat.has(runId)) return handler(payload);
    if (!startLost.delete(runId)) return heldRepeat(failRunRepeat, runId, () => handler(payload));
    await handler(payload);
    const error = new Error('injected: the answer of FailRun was lost');
    error.name = 'Lambda.ServiceException';
    throw error;
  };

const { stack, faults, handlers } = useStackWithFaults({ wrapHandler: lateFailRun });

const echo = (id: string, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.echo, { input: { value: id }, ...fields });
const ledger = (id: string, fields: Parameters<typeof step>[3] = {}) =>
  step(stack, id, T.ledger, { input: { entry: { from: id } }, rollbackHint: 'remove the entry by hand', ...fields });

const invalidate = (runId: string, stepId: string) =>
  stack.request('POST', `/runs/${runId}/steps/${stepId}/invalidate`, { reason: `${stepId} changed` });

/** The run's ledger entries as `stepId → generations`, one per entry. */
async function ledgerGenerations(runId: string): Promise<Record<string, number[]>> {
  const { json } = await stack.request('GET', '/conformance/ledger');
  const out: Record<string, number[]> = {};
  for (const e of (json as { entries: { runId: string; stepId: string; generation: number }[] }).entries)
    if (e.runId === runId) out[e.stepId] = [...(out[e.stepId] ?? []), e.generation].sort();
  return out;
}

/** Attempts of a step as `generation#attempt`. */
async function attemptsOf(runId: string, stepId: string): Promise<string[]> {
  return (await stack.store.listAttempts(runId))
    .filter((a) => a.stepId === stepId)
    .map((a) => `${a.generation}#${a.attempt}`)
    .sort();
}

/** Each step of a chain started its latest generation after its upstream step's latest generation finished. */
function expectInOrder(run: RunView, chain: readonly string[]): void {
  for (let i = 1; i < chain.length; i++) {
    const upstream = stepOf(run, chain[i - 1] ?? '');
    const dependent = stepOf(run, chain[i] ?? '');
    expect(
      Date.parse(dependent.startedAt ?? ''),
      `${dependent.id} started before ${upstream.id} finished`,
    ).toBeGreaterThanOrEqual(Date.parse(upstream.finishedAt ?? ''));
  }
}

async function completeRun(objective: string, steps: Parameters<typeof plan>[1]): Promise<string> {
  const runId = await stack.startRun({ plan: plan(objective, steps) });
  const done = await waitForRun(stack, runId);
  expect(done.status, summary(done)).toBe('complete');
  return runId;
}

const chain = () => [ledger('a'), ledger('b', { dependsOn: ['a'] }), ledger('c', { dependsOn: ['b'] })];

/** Holds the RunStep of `stepId`'s generation `generation` (its step execution's first invocation). */
const holdClaim = (runId: string, stepId: string, generation: number) =>
  handlers.hold({
    key: 'StepExecutor',
    match: (payload) => payload.runId === runId && payload.stepId === stepId && payload.generation === generation,
  });

describe('two invalidations of one run that overlap', () => {
  it('runs a downstream step invalidated again while its upstream step runs anew once, after that step', async () => {
    const runId = await completeRun('downstream invalidated while upstream reruns', chain());
    const claimOfA = holdClaim(runId, 'a', 2);
    expect((await invalidate(runId, 'a')).json).toMatchObject({ stepIds: ['a', 'b', 'c'], reopened: true });
    await claimOfA.arrived;

    expect((await invalidate(runId, 'b')).json).toMatchObject({ stepIds: ['b', 'c'], reopened: false });
    claimOfA.release();
    const done = await waitForRun(stack, runId, (r) => r.status === 'complete' && stepOf(r, 'c').generation === 3);

    expect(done.steps.map((s) => `${s.id}${s.generation}${s.status}`)).toEqual([
      'a2succeeded',
      'b3succeeded',
      'c3succeeded',
    ]);
    expect(executedGenerations(stack, runId)).toEqual({ a: [1, 2], b: [1, 3], c: [1, 3] });
    expect(await ledgerGenerations(runId)).toEqual({ a: [1, 2], b: [1, 3], c: [1, 3] });
    expectInOrder(done, ['a', 'b', 'c']);
  }, 60_000);

  it('runs a step invalidated twice (two keys) once in its latest generation, and its downstream once after it', async () => {
    const runId = await completeRun('same step invalidated twice', chain());
    const claimOfA = holdClaim(runId, 'a', 2);
    expect((await invalidate(runId, 'a')).status).toBe(202);
    await claimOfA.arrived;

    expect((await invalidate(runId, 'a')).json).toMatchObject({ stepIds: ['a', 'b', 'c'], reopened: false });
    claimOfA.release();
    const done = await waitForRun(stack, runId, (r) => r.status === 'complete' && stepOf(r, 'c').generation === 3);

    expect(done.steps.map((s) => `${s.id}${s.generation}${s.status}`)).toEqual([
      'a3succeeded',
      'b3succeeded',
      'c3succeeded',
    ]);
    // a's generation 2 was started, but superseded before its claim: it never made an attempt.
    expect(await attemptsOf(runId, 'a')).toEqual(['1#1', '3#1']);
    expect(await ledgerGenerations(runId)).toEqual({ a: [1, 3], b: [1, 3], c: [1, 3] });
    expect((await stack.store.getRun(runId))?.reopened).toBe(1);
    expectInOrder(done, ['a', 'b', 'c']);
  }, 60_000);
});

describe('an invalidation that supersedes a gate waiting for a person', () => {
  const gatePlan = () => [
    echo('before'),
    step(stack, 'gate', T.approver, {
      dependsOn: ['before'],
      input: {},
      approval: { question: 'Ship it?', timeoutSeconds: 300 },
    }),
    echo('after', { dependsOn: ['gate'] }),
  ];

  const pending = async (runId: string): Promise<ApprovalView[]> => {
    const { json } = await stack.request('GET', `/approvals?status=pending&runId=${runId}`);
    return (json as { approvals: ApprovalView[] }).approvals;
  };

  async function expectClosedAndAskedAgain(runId: string, old: ApprovalView): Promise<void> {
    const next = await pendingApproval(stack, runId, 'gate');
    expect(next.approvalId).not.toBe(old.approvalId);
    expect((await pending(runId)).map((a) => a.approvalId)).toEqual([next.approvalId]);
    const closed = await stack.request('GET', `/approvals/${encodeURIComponent(old.approvalId)}`);
    expect((closed.json as { approval: ApprovalView }).approval.status).not.toBe('pending');

    const late = await decide(stack, old, { decision: 'approve' });
    expect(late.status).toBe(410);
    expect(late.json).toMatchObject({ error: { code: 'E_APPROVAL_SUPERSEDED' } });

    expect((await decide(stack, next, { decision: 'approve' })).status).toBe(200);
    const done = await waitForRun(stack, runId);
    expect(done.status, summary(done)).toBe('complete');
    expect(stepOf(done, 'gate')).toMatchObject({ status: 'succeeded', generation: 2 });
  }

  it('closes the old approval, answers a decision on it 410, and asks again', async () => {
    const runId = await stack.startRun({ plan: plan('gate superseded', gatePlan()) });
    const old = await pendingApproval(stack, runId, 'gate');
    await waitForRun(stack, runId, (r) => stepOf(r, 'gate').status === 'awaiting_approval');

    expect((await invalidate(runId, 'gate')).json).toMatchObject({ stepIds: ['gate', 'after'] });

    await expectClosedAndAskedAgain(runId, old);
  }, 60_000);
});

/** A repeat to hold: registered under a run, with what the test waits on and lets go. */
function repeatToHold() {
  let arrived!: () => void;
  let release!: () => void;
  let ran!: () => void;
  const signals = {
    arrived: new Promise<void>((resolve) => {
      arrived = resolve;
    }),
    ran: new Promise<void>((resolve) => {
      ran = resolve;
    }),
  };
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { hooks: { arrived, released, ran }, ...signals, release: () => release() };
}

describe('a FailRun repeated after an invalidation reopened the run', () => {
  it('leaves the new opening and its new generations alone', async () => {
    const objective = 'late fail-run repeat';
    const repeat = repeatToHold();
    const held = faults.hold({
      method: 'createRun',
      match: (call) => (call.args[0] as { objective?: string }).objective === objective,
    });
    const starting = stack.startRun({
      plan: plan(objective, [step(stack, 'A', T.sleep, { input: { ms: 2000 } }), echo('B', { dependsOn: ['A'] })]),
    });
    await held.arrived;
    const id = faults.runIdFor(objective) ?? '';
    startLost.add(id);
    failRunRepeat.set(id, repeat.hooks);
    held.release();
    const runId = await starting;
    // Not waitForRun: it waits for the stack to settle, and the repeat held keeps the run's first execution going.
    await repeat.arrived;
    // FailRun's first try sent its command to the run's decider: the run ends failed once that is decided.
    const failed = await eventually(
      () => faults.raw().getRun(runId),
      (run) => run?.terminal !== undefined,
      'the run failing',
    ).catch((error: unknown) => {
      repeat.release();
      throw error;
    });
    expect(failed?.terminal).toMatchObject({ state: 'failed', reason: 'planning_failed' });

    expect((await invalidate(runId, 'A')).json).toMatchObject({ stepIds: ['A', 'B'], reopened: true });
    repeat.release();
    await repeat.ran;
    const done = await waitForRun(stack, runId, (r) => r.status !== 'running', 30_000);

    expect(done.status, summary(done)).toBe('complete');
    expect(done.steps.map((s) => `${s.id}${s.generation}${s.status}`)).toEqual(['A2succeeded', 'B2succeeded']);
    expect((await stack.store.getRun(runId))?.previousTerminals).toHaveLength(1);
  }, 60_000);
});

describe("a step's failure before its start, repeated after an invalidation reopened the run", () => {
  it('does not fail the new generation', async () => {
    // F's input is valid only once the gate's decision says go: its generation 1 fails at its claim (E_INPUT_SCHEMA).
    const steps = [
      step(stack, 'G', T.approver, { input: {}, approval: { question: 'Go?', timeoutSeconds: 300 } }),
      step(stack, 'F', T.sleep, { dependsOn: ['G'], input: { ms: '{% $outputs.G.comment = "go" ? 1 : "no" %}' } }),
    ];
    const objective = 'late repeat of a claim-time failure';
    const repeat = repeatToHold();
    const held = faults.hold({
      method: 'createRun',
      match: (call) => (call.args[0] as { objective?: string }).objective === objective,
    });
    const starting = stack.startRun({ plan: plan(objective, steps) });
    await held.arrived;
    runStepRepeat.set(faults.runIdFor(objective) ?? '', repeat.hooks);
    held.release();
    const runId = await starting;
    const first = await pendingApproval(stack, runId, 'G');
    expect(
      (await decide(stack, first, { decision: 'approve', output: { approved: true, comment: 'stop' } })).status,
    ).toBe(200);
    await repeat.arrived;
    // The first try's failure was sent to the run's decider: F is failed once that is decided.
    const failedF = await eventually(
      () => faults.raw().getStep(runId, 'F'),
      (f) => f?.status === 'failed',
      'F failing',
    ).catch((error: unknown) => {
      repeat.release();
      throw error;
    });
    expect(failedF).toMatchObject({
      status: 'failed',
      generation: 1,
      attempts: 0,
      error: { code: expect.stringMatching(/^E_INPUT/) },
    });

    // The run may have ended already (reopened) or not yet (the replanner answers F's final failure): either way.
    expect((await invalidate(runId, 'G')).json).toMatchObject({ stepIds: ['G', 'F'] });
    repeat.release();
    await repeat.ran;
    expect(await faults.raw().getStep(runId, 'F')).toMatchObject({ status: 'pending', generation: 2 });
    const next = await pendingApproval(stack, runId, 'G');
    expect((await decide(stack, next, { decision: 'approve', output: { approved: true, comment: 'go' } })).status).toBe(
      200,
    );
    const done = await waitForRun(stack, runId, (r) => r.status === 'complete' || stepOf(r, 'F').status === 'failed');

    expect(
      done.steps.map((s) => `${s.id}${s.generation}${s.status}`),
      summary(done),
    ).toEqual(['G2succeeded', 'F2succeeded']);
    expect(done.status).toBe('complete');
  }, 60_000);
});
