/**
 * RunStep's side effects on the DynamoDB store (dynalite): a mutating or idempotent capability goes through its
 * idempotency record, so a crash after the side effect replays the recorded answer instead of acting again, a failed
 * call lets a retry call again, and a call in progress elsewhere is not made twice.
 */
import { describe, expect, it } from 'vitest';
import { builtinTool } from '../../../shared/capabilities/builtin.ts';
import { capabilityError } from '../../../shared/capabilities/capability-errors.ts';
import { CONFORMANCE_TARGETS, createConformancePack } from '../../../shared/capabilities/conformance.ts';
import type { CapabilityBinding } from '../../../shared/ports/capabilities.ts';
import {
  afterBackoff,
  BULK,
  CHARGE,
  counting,
  DONE_1,
  firstCall,
  step,
  successWrite,
  useRunStepStore,
} from '../../support/run-step-harness.ts';

const { store, runner, crashOnce, seedRun, attemptsOf, stepOf } = useRunStepStore();

describe('RunStep side effects through idempotency records (dynalite)', () => {
  it('replays a mutating call from its idempotency record after a crash after the side effect: the ledger is written once', async () => {
    const pack = createConformancePack();
    const ledger = counting(pack.bindings[CONFORMANCE_TARGETS.ledger] as CapabilityBinding);
    const runId = await seedRun([step('pay', CONFORMANCE_TARGETS.ledger, { entry: { invoice: 7 } })]);
    const bindings = { [CONFORMANCE_TARGETS.ledger]: ledger };
    // The first invocation writes the ledger, then dies before it records the attempt (with the step's success).
    const crashing = runner(bindings, { over: crashOnce('transitionStep', successWrite) });

    await expect(crashing.runStep(firstCall(runId, 'pay'))).rejects.toThrow(/Lambda died in transitionStep/);
    expect(pack.ledger.entries()).toHaveLength(1);
    expect(await attemptsOf(runId, 'pay')).toEqual([]);
    // The step machine retries the Task with the same payload; then a duplicate of that call arrives.
    const { runStep } = runner(bindings);
    const repeated = await runStep(firstCall(runId, 'pay'));
    const duplicate = await runStep(firstCall(runId, 'pay'));

    expect([repeated, duplicate]).toEqual([DONE_1, DONE_1]);
    expect(ledger.calls).toBe(1);
    expect(pack.ledger.entries()).toHaveLength(1);
    const attempts = await attemptsOf(runId, 'pay');
    expect(attempts.map((a) => [a.attempt, a.outcome, a.evidence.replayed])).toEqual([[1, 'succeeded', true]]);
    expect(attempts[0]?.evidence.idempotencyKey).toBe(`${runId}#pay#1`);
    const entryId = pack.ledger.entries()[0]?.entryId;
    expect(attempts[0]?.output).toEqual({ entryId });
    expect(await stepOf(runId, 'pay')).toMatchObject({ status: 'succeeded', output: { entryId }, attempts: 1 });
  });

  it('records the first call of a mutating step as not replayed, with its idempotency key', async () => {
    const pack = createConformancePack();
    const runId = await seedRun([step('pay', CONFORMANCE_TARGETS.ledger, { entry: 'once' })]);

    const next = await runner(pack.bindings).runStep(firstCall(runId, 'pay'));

    expect(next).toEqual(DONE_1);
    expect((await attemptsOf(runId, 'pay'))[0]?.evidence).toMatchObject({
      sideEffect: 'mutating',
      idempotencyKey: `${runId}#pay#1`,
      replayed: false,
    });
    expect(pack.ledger.entries().map((e) => e.idempotencyKey)).toEqual([`${runId}#pay#1`]);
  });

  it('lets a retry call a side effect again after a failed call (the record is aborted)', async () => {
    let calls = 0;
    const charge = builtinTool('charge', async () => {
      calls++;
      if (calls === 1) throw capabilityError('E_GATEWAY', 'payment gateway down', { retryable: true });
      return { chargeId: `ch-${calls}` };
    });
    const runId = await seedRun([step('charge', CHARGE, { amount: 5 })]);
    const { runStep } = runner({ [CHARGE]: charge });

    const first = await runStep(firstCall(runId, 'charge'));
    expect(first).toEqual({ action: 'retry', attempt: 2, delaySeconds: 1 });
    expect(await stepOf(runId, 'charge')).toMatchObject({
      status: 'retrying',
      attempts: 1,
      error: { code: 'E_GATEWAY', message: expect.stringContaining('down'), retryable: true },
    });
    const second = await runStep(afterBackoff(runId, 'charge', first));
    const duplicate = await runStep(afterBackoff(runId, 'charge', first));

    expect(second).toEqual({ action: 'done', attempt: 2 });
    expect(duplicate).toEqual({ action: 'done', attempt: 2 });
    expect(calls).toBe(2);
    const attempts = await attemptsOf(runId, 'charge');
    expect(attempts.map((a) => [a.attempt, a.outcome, a.output, a.error?.code])).toEqual([
      [1, 'failed', undefined, 'E_GATEWAY'],
      [2, 'succeeded', { chargeId: 'ch-2' }, undefined],
    ]);
    expect(attempts[1]?.evidence).toMatchObject({ replayed: false, idempotencyKey: `${runId}#charge#1` });
    expect(await stepOf(runId, 'charge')).toMatchObject({
      status: 'succeeded',
      output: { chargeId: 'ch-2' },
      attempts: 2,
      error: null,
    });
  });

  it('does not call a side effect another execution is still calling: a retryable E_IDEMPOTENCY_IN_PROGRESS', async () => {
    const charge = counting(builtinTool('charge', async () => ({ chargeId: 'x' })));
    const runId = await seedRun([step('charge', CHARGE, { amount: 5 })]);
    const now = Math.floor(Date.now() / 1000);
    expect(await store.beginIdempotent(`${runId}#charge#1`, now + 600, now)).toBeUndefined();

    const next = await runner({ [CHARGE]: charge }).runStep(firstCall(runId, 'charge'));

    expect(next).toEqual({ action: 'retry', attempt: 2, delaySeconds: 1 });
    expect(charge.calls).toBe(0);
    expect((await attemptsOf(runId, 'charge'))[0]).toMatchObject({
      outcome: 'failed',
      error: { code: 'E_IDEMPOTENCY_IN_PROGRESS', retryable: true },
    });
    expect((await stepOf(runId, 'charge')).status).toBe('retrying');
  });

  it('replays an oversized side-effect answer as the same failure without acting again', async () => {
    const bulk = counting(builtinTool('bulk', async () => ({ rows: 'z'.repeat(3000) })));
    const runId = await seedRun([step('export', BULK, {})]);
    const bindings = { [BULK]: bulk };
    const capabilityCall = { maxOutputBytes: 1000 };

    await expect(
      runner(bindings, { capabilityCall, over: crashOnce('putAttempt') }).runStep(firstCall(runId, 'export')),
    ).rejects.toThrow(/Lambda died/);
    const repeated = await runner(bindings, { capabilityCall }).runStep(firstCall(runId, 'export'));

    expect(repeated).toEqual(DONE_1);
    expect(bulk.calls).toBe(1);
    const [attempt] = await attemptsOf(runId, 'export');
    expect(attempt).toMatchObject({
      outcome: 'failed',
      error: { code: 'E_OUTPUT_TOO_LARGE', retryable: false },
      evidence: { replayed: true },
    });
    expect(await stepOf(runId, 'export')).toMatchObject({ status: 'failed', error: { code: 'E_OUTPUT_TOO_LARGE' } });
  });
});
