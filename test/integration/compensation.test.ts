/**
 * Compensation (saga) through the embedded runtime and the real synthesized state machines: a segment whose step
 * fails for good undoes its finished mutating steps in reverse completion order, each exactly once, through the
 * conformance ledger's compensation (`tool:conformance.unledger`, seen from outside in GET /conformance/ledger);
 * a cancellation with `compensate: true` does the same; a sibling still running is waited for; a compensation that
 * fails pauses the run for a person, with the evidence.
 */
import { describe, expect, it } from 'vitest';
import { builtinTool } from '../../shared/capabilities/builtin.ts';
import { capabilityError } from '../../shared/capabilities/capability-errors.ts';
import { CONFORMANCE_TARGETS as T } from '../../shared/capabilities/conformance.ts';
import type { Capability, PlanStep } from '../../shared/plan/schema.ts';
import type { CapabilityBinding } from '../../shared/ports/capabilities.ts';
import {
  plan,
  type RunView,
  statusOf,
  step,
  stepOf,
  summary,
  useTestStack,
  waitForRun,
} from '../support/local-stack.ts';

/**
 * A charge whose refund (its compensation) is always refused, a charge with no compensation at all, and a charge
 * whose refund is refused while the refund desk is down (a person retries it once it is back).
 */
const SAGA = {
  charge: 'tool:saga.charge',
  manual: 'tool:saga.manual',
  desk: 'tool:saga.desk-charge',
  refund: 'tool:saga.refund',
} as const;
const refundDesk = { down: true, refunds: [] as string[] };
const chargeContracts = {
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['amount'],
    properties: { amount: { type: 'integer' } },
  },
  outputSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['chargeId'],
    properties: { chargeId: { type: 'string' } },
  },
};
const charged = async (input: unknown) => ({ chargeId: `charge-${(input as { amount: number }).amount}` });
const sagaPack: { capabilities: Capability[]; bindings: Record<string, CapabilityBinding> } = {
  capabilities: [
    {
      target: SAGA.charge,
      description: 'Charges an amount; its refund is refused.',
      sideEffect: 'mutating' as const,
      ...chargeContracts,
      compensate: {
        target: T.fail,
        input: { message: '{% "refund of " & $output.chargeId & " refused" %}', retryable: false },
      },
    },
    { target: SAGA.manual, description: 'Charges an amount.', sideEffect: 'mutating' as const, ...chargeContracts },
    {
      target: SAGA.desk,
      description: 'Charges an amount; the refund desk undoes it.',
      sideEffect: 'mutating' as const,
      ...chargeContracts,
      compensate: { target: SAGA.refund, input: { chargeId: '{% $output.chargeId %}' } },
    },
    {
      target: SAGA.refund,
      description: 'Refunds a charge; refused while the desk is down.',
      sideEffect: 'mutating' as const,
      inputSchema: chargeContracts.outputSchema,
      outputSchema: { type: 'object' },
    },
  ],
  bindings: {
    [SAGA.charge]: builtinTool('saga.charge', charged),
    [SAGA.manual]: builtinTool('saga.manual', charged),
    [SAGA.desk]: builtinTool('saga.desk-charge', charged),
    [SAGA.refund]: builtinTool('saga.refund', async (input) => {
      const { chargeId } = input as { chargeId: string };
      if (refundDesk.down)
        throw capabilityError('E_DESK_DOWN', `the refund desk is down: ${chargeId}`, { retryable: false });
      refundDesk.refunds.push(chargeId);
      return {};
    }),
  },
};

const stack = useTestStack({ extraCapabilities: sagaPack });

interface Entry {
  entryId: string;
  entry: unknown;
  runId: string;
  stepId: string;
  idempotencyKey: string;
  at: string;
}

async function ledgerOf(runId: string): Promise<Entry[]> {
  const { json } = await stack.request('GET', '/conformance/ledger');
  return (json as { entries: Entry[] }).entries.filter((e) => e.runId === runId);
}

const reversed = (entries: Entry[]): string[] =>
  entries.flatMap((e) => {
    const entry = e.entry as { reverses?: string } | null;
    return typeof entry?.reverses === 'string' ? [entry.reverses] : [];
  });

const ledger = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.ledger, { input: { entry: { id } }, segment: 'release', ...fields });
const failing = (id: string, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.fail, { input: { message: `${id} fails`, retryable: false }, segment: 'release', ...fields });
const sleeping = (id: string, ms: number, fields: Partial<PlanStep> = {}) =>
  step(stack, id, T.sleep, { input: { ms }, segment: 'release', ...fields });

const start = (objective: string, steps: PlanStep[]) => stack.startRun({ plan: plan(objective, steps) });
const settledOrPaused = (run: RunView) => ['complete', 'failed', 'cancelled', 'paused'].includes(run.status);

describe('compensating a segment', () => {
  it('reverses both ledger steps in reverse completion order, each once, when a later step fails', async () => {
    const runId = await start('saga: a failing step', [
      ledger('debit'),
      ledger('credit', { dependsOn: ['debit'] }),
      failing('notify', { dependsOn: ['credit'] }),
    ]);
    const run = await waitForRun(stack, runId);
    expect(run.status, summary(run)).toBe('failed');
    expect(statusOf(run, 'debit')).toBe('compensated');
    expect(statusOf(run, 'credit')).toBe('compensated');
    expect(statusOf(run, 'notify')).toBe('failed');
    expect(run.terminal?.evidence.compensated).toEqual(['credit', 'debit']);

    const entries = await ledgerOf(runId);
    const debit = entries.find((e) => e.stepId === 'debit' && reversed([e]).length === 0);
    const credit = entries.find((e) => e.stepId === 'credit' && reversed([e]).length === 0);
    // Two entries made, two reversals, the later one first, each under its own idempotency key.
    expect(entries).toHaveLength(4);
    expect(reversed(entries)).toEqual([credit?.entryId, debit?.entryId]);
    const undo = entries.filter((e) => reversed([e]).length > 0);
    expect(undo.map((e) => e.idempotencyKey)).toEqual([`${runId}#credit#1#compensate`, `${runId}#debit#1#compensate`]);
    expect(stepOf(run, 'credit')).toMatchObject({
      compensation: { target: T.unledger, input: { entryId: credit?.entryId }, output: { entryId: undo[0]?.entryId } },
    });
  });

  it('leaves steps outside the segment as they are', async () => {
    const runId = await start('saga: outside the segment', [
      ledger('kept', { segment: undefined, rollbackHint: 'remove the entry by hand' }),
      ledger('undone'),
      failing('boom', { dependsOn: ['undone'] }),
    ]);
    const run = await waitForRun(stack, runId);
    expect(run.status, summary(run)).toBe('failed');
    expect(statusOf(run, 'kept')).toBe('succeeded');
    expect(statusOf(run, 'undone')).toBe('compensated');
    const entries = await ledgerOf(runId);
    expect(reversed(entries)).toEqual([entries.find((e) => e.stepId === 'undone')?.entryId]);
  });

  it('waits for a sibling still running before it compensates, and compensates what that sibling released', async () => {
    const runId = await start('saga: a sibling still running', [
      ledger('first'),
      failing('fails', { dependsOn: ['first'] }),
      sleeping('slow', 1_500),
      ledger('after-slow', { dependsOn: ['slow'] }),
    ]);
    const run = await waitForRun(stack, runId);
    expect(run.status, summary(run)).toBe('failed');
    expect(statusOf(run, 'slow')).toBe('succeeded');
    const slowEnded = stepOf(run, 'slow').finishedAt ?? '';
    const entries = await ledgerOf(runId);
    const undo = entries.filter((e) => reversed([e]).length > 0);
    // Nothing was undone while the sibling still ran.
    for (const e of undo) expect(e.at >= slowEnded, `${e.at} after ${slowEnded}`).toBe(true);
    // What the sibling released either never ran (cancelled with its segment) or ran and was undone too, first.
    const made = entries.filter((e) => reversed([e]).length === 0);
    if (statusOf(run, 'after-slow') === 'cancelled') {
      expect(made.map((e) => e.stepId)).toEqual(['first']);
      expect(reversed(entries)).toEqual([made[0]?.entryId]);
    } else {
      expect(statusOf(run, 'after-slow')).toBe('compensated');
      const byStep = new Map(made.map((e) => [e.stepId, e.entryId]));
      expect(reversed(entries)).toEqual([byStep.get('after-slow'), byStep.get('first')]);
    }
    expect(new Set(reversed(entries)).size).toBe(reversed(entries).length);
  });

  it('pauses for a person, with the hint, when a mutating step of the segment has no compensation', async () => {
    const runId = await start('saga: a rollback hint', [
      step(stack, 'manual', SAGA.manual, {
        input: { amount: 1 },
        segment: 'release',
        rollbackHint: 'ask finance to refund the charge',
      }),
      failing('boom', { dependsOn: ['manual'] }),
    ]);
    const run = await waitForRun(stack, runId, settledOrPaused);
    expect(run.status, summary(run)).toBe('paused');
    expect(run.terminal?.reason).toBe('rollback_required');
    expect(run.terminal?.evidence).toMatchObject({
      stepId: 'manual',
      rollbackHint: 'ask finance to refund the charge',
      output: { chargeId: 'charge-1' },
    });
    expect(statusOf(run, 'manual')).toBe('succeeded');
    expect(stepOf(run, 'manual')).toMatchObject({ rollbackHint: 'ask finance to refund the charge' });
  });
});

describe('cancelling with compensation', () => {
  it('undoes the finished mutating steps of every segment, then ends cancelled', async () => {
    const runId = await start('saga: cancel with compensation', [
      ledger('one'),
      ledger('two', { dependsOn: ['one'] }),
      sleeping('wait', 30_000, { dependsOn: ['two'] }),
    ]);
    await waitForRun(stack, runId, (run) => statusOf(run, 'wait') === 'running');
    const { status } = await stack.request('POST', `/runs/${runId}/cancel`, { compensate: true });
    expect(status).toBe(200);
    const run = await waitForRun(stack, runId);
    expect(run.status, summary(run)).toBe('cancelled');
    expect(statusOf(run, 'one')).toBe('compensated');
    expect(statusOf(run, 'two')).toBe('compensated');
    expect(statusOf(run, 'wait')).toBe('cancelled');
    // Who asked survives the compensation path: the run ends cancelled later, from the last compensation's end.
    expect(run.terminal?.evidence.requestedBy).toBe('local-token');
    const entries = await ledgerOf(runId);
    const made = new Map(entries.filter((e) => reversed([e]).length === 0).map((e) => [e.stepId, e.entryId]));
    expect(reversed(entries)).toEqual([made.get('two'), made.get('one')]);
  });

  it('compensates nothing on a plain cancellation', async () => {
    const runId = await start('saga: plain cancel', [ledger('one'), sleeping('wait', 30_000, { dependsOn: ['one'] })]);
    await waitForRun(stack, runId, (run) => statusOf(run, 'wait') === 'running');
    await stack.request('POST', `/runs/${runId}/cancel`);
    const run = await waitForRun(stack, runId);
    expect(run.status).toBe('cancelled');
    expect(statusOf(run, 'one')).toBe('succeeded');
    expect(reversed(await ledgerOf(runId))).toEqual([]);
  });
});

describe('a compensation that fails', () => {
  it('pauses the run for a person with the evidence', async () => {
    const runId = await start('saga: a failing compensation', [
      ledger('debit'),
      step(stack, 'charge', SAGA.charge, { input: { amount: 5 }, segment: 'release', dependsOn: ['debit'] }),
      failing('boom', { dependsOn: ['charge'] }),
    ]);
    const run = await waitForRun(stack, runId, settledOrPaused);
    expect(run.status, summary(run)).toBe('paused');
    expect(run.terminal?.reason).toBe('compensation_failed');
    expect(statusOf(run, 'charge')).toBe('compensation_failed');
    // The sequence stops at the failure: what finished earlier is left for the person to decide on.
    expect(statusOf(run, 'debit')).toBe('succeeded');
    expect(run.terminal?.evidence).toMatchObject({
      stepId: 'charge',
      target: T.fail,
      input: { message: 'refund of charge-5 refused', retryable: false },
      error: { code: 'E_CONFORMANCE_FAIL', message: 'refund of charge-5 refused' },
    });
    expect(reversed(await ledgerOf(runId))).toEqual([]);
  });
});

describe("a person's answer to a compensation that failed", () => {
  const deskRun = async (objective: string) => {
    refundDesk.down = true;
    refundDesk.refunds.length = 0;
    const runId = await start(objective, [
      ledger('debit'),
      step(stack, 'charge', SAGA.desk, { input: { amount: 7 }, segment: 'release', dependsOn: ['debit'] }),
      failing('boom', { dependsOn: ['charge'] }),
    ]);
    const paused = await waitForRun(stack, runId, settledOrPaused);
    expect(paused.status, summary(paused)).toBe('paused');
    expect(paused.terminal?.reason).toBe('compensation_failed');
    expect(statusOf(paused, 'charge')).toBe('compensation_failed');
    return runId;
  };
  const act = (runId: string, stepId: string, body: unknown) =>
    stack.request('POST', `/runs/${runId}/steps/${stepId}/compensation`, body);

  it('retries the compensation on request: the run reopens and its saga goes on to the end', async () => {
    const runId = await deskRun('saga: a retried compensation');
    refundDesk.down = false;
    const answer = await act(runId, 'charge', { action: 'retry' });
    expect(answer.status, JSON.stringify(answer.json)).toBe(202);
    expect(answer.json).toMatchObject({ runId, stepId: 'charge', status: 'compensating', reopened: true });
    const run = await waitForRun(stack, runId);
    expect(run.status, summary(run)).toBe('failed');
    expect(statusOf(run, 'charge')).toBe('compensated');
    expect(statusOf(run, 'debit')).toBe('compensated');
    expect(run.terminal?.evidence.compensated).toEqual(['charge', 'debit']);
    expect(refundDesk.refunds).toContain('charge-7');
    expect(stepOf(run, 'charge')).toMatchObject({
      compensation: { target: SAGA.refund, round: 1, retriedBy: 'local-token' },
    });
    const entries = await ledgerOf(runId);
    expect(reversed(entries)).toEqual([entries.find((e) => e.stepId === 'debit')?.entryId]);
  });

  it('takes a resolution by hand with a note, then compensates the rest and ends the run', async () => {
    const runId = await deskRun('saga: a compensation resolved by hand');
    const answer = await act(runId, 'charge', { action: 'resolve', note: 'refunded at the bank counter' });
    expect(answer.status, JSON.stringify(answer.json)).toBe(202);
    expect(answer.json).toMatchObject({ status: 'compensated', reopened: true });
    const run = await waitForRun(stack, runId);
    expect(run.status, summary(run)).toBe('failed');
    expect(statusOf(run, 'charge')).toBe('compensated');
    expect(statusOf(run, 'debit')).toBe('compensated');
    expect(stepOf(run, 'charge')).toMatchObject({
      compensation: { resolution: { by: 'local-token', note: 'refunded at the bank counter' } },
    });
    expect(refundDesk.refunds).not.toContain('charge-7');
    // The console's step view shows it too, beside the buttons that act on a failed compensation.
    const detail = await stack.request('GET', `/runs/${runId}/steps/charge`);
    expect(detail.json).toMatchObject({
      status: 'compensated',
      record: { compensation: { target: SAGA.refund, resolution: { note: 'refunded at the bank counter' } } },
    });
  });

  it('refuses (409) a step whose compensation has not failed, and a second answer to the same failure', async () => {
    const runId = await deskRun('saga: refused compensation actions');
    const notFailed = await act(runId, 'debit', { action: 'retry' });
    expect(notFailed.status).toBe(409);
    expect((notFailed.json as { error: { code: string } }).error.code).toBe('E_NOT_COMPENSATION_FAILED');
    expect((await act(runId, 'charge', { action: 'resolve', note: 'done by hand' })).status).toBe(202);
    const again = await act(runId, 'charge', { action: 'retry' });
    expect(again.status).toBe(409);
    expect((again.json as { error: { code: string } }).error.code).toBe('E_NOT_COMPENSATION_FAILED');
    expect((await act(runId, 'charge', { action: 'resolve' })).status).toBe(400);
    expect((await act(runId, 'ghost', { action: 'retry' })).status).toBe(404);
    await waitForRun(stack, runId);
  });
});
