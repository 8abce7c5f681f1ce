import { describe, expect, it } from 'vitest';
import type { TargetFacts } from '../../../../shared/engine/run/state.ts';
import { stepExecutionName } from '../../../../shared/ports/executions.ts';
import { DrivenRun, initialState, planOf, typesOf } from '../../../support/decider.ts';

/** `tool:pay` and `tool:ship` change the world and can be undone; `tool:check` only reads. */
const targets = (target: string): TargetFacts | undefined =>
  target === 'tool:pay' || target === 'tool:ship'
    ? { sideEffect: 'mutating', compensateTarget: `${target}-undo` }
    : { sideEffect: 'none' };

/** A segment: pay, then ship, then a check of both; `check` ends as `checkEnds` says. */
function saga(checkEnds: 'fails' | 'runs' = 'fails') {
  const run = new DrivenRun(initialState({ targets }));
  run.apply({
    kind: 'StartRun',
    plan: planOf([
      { id: 'pay', target: 'tool:pay', segment: 's' },
      { id: 'ship', target: 'tool:ship', segment: 's', dependsOn: ['pay'] },
      { id: 'check', target: 'tool:check', segment: 's', dependsOn: ['ship'] },
    ]),
  });
  run.succeed('pay');
  run.succeed('ship');
  if (checkEnds === 'fails') run.fail('check', { code: 'E_BAD', message: 'does not add up', retryable: false });
  return run;
}

const undoFailure = { code: 'E_REFUND', message: 'refund refused', retryable: false };

describe('the saga', () => {
  it('undoes the mutating steps of a failed segment one at a time, most recent first, then ends the run', () => {
    const run = saga();
    expect(run.status('ship')).toBe('compensating');
    expect(run.status('pay')).toBe('succeeded');
    expect(run.compensationExecution('ship')).toBe(stepExecutionName('run-1', '~undo~ship', 1));
    expect(typesOf(run.compensate('ship', { kind: 'compensated' }))).toEqual([
      'CompensationEnded:ship',
      'CompensationStarted:pay',
    ]);
    expect(typesOf(run.compensate('pay', { kind: 'compensated' }))).toEqual(['CompensationEnded:pay', 'RunFinished']);
    expect(run.state.run.terminal).toMatchObject({ state: 'failed', evidence: { compensated: ['ship', 'pay'] } });
    expect(run.step('pay').compensation).toMatchObject({ target: 'tool:pay-undo', attempts: 1, error: null });
  });

  it('keeps a retried attempt as evidence only, once', () => {
    const run = saga();
    const retry = { kind: 'retry', error: { ...undoFailure, retryable: true }, delaySeconds: 2 } as const;
    expect(typesOf(run.compensate('ship', retry, 1))).toEqual(['CompensationRetrying:ship']);
    expect(run.compensate('ship', retry, 1)).toEqual([]);
    expect(run.step('ship')).toMatchObject({ status: 'compensating', compensation: { attempts: 1 } });
    expect(typesOf(run.compensate('ship', { kind: 'compensated' }, 2))).toEqual([
      'CompensationEnded:ship',
      'CompensationStarted:pay',
    ]);
    expect(run.step('ship').compensation).toMatchObject({ attempts: 2, error: null });
  });

  it('pauses the run for a person when a compensation fails for good', () => {
    const run = saga();
    expect(typesOf(run.compensate('ship', { kind: 'failed', error: undoFailure }))).toEqual([
      'CompensationEnded:ship',
      'RunFinished',
    ]);
    expect(run.status('ship')).toBe('compensation_failed');
    expect(run.status('pay')).toBe('succeeded');
    expect(run.state.run.terminal).toMatchObject({
      state: 'paused',
      reason: 'compensation_failed',
      evidence: { stepId: 'ship', error: { code: 'E_REFUND' }, target: 'tool:ship-undo' },
    });
  });

  it("retries a failed compensation at a person's word: a new round, a new execution, the run reopened", () => {
    const run = saga();
    const firstRound = run.compensationExecution('ship');
    run.compensate('ship', { kind: 'failed', error: undoFailure });
    const events = run.apply({ kind: 'ActOnCompensation', stepId: 'ship', action: { kind: 'retry' }, by: 'ana' });
    expect(typesOf(events)).toEqual(['CompensationStarted:ship', 'RunReopened']);
    expect(run.lastReply).toEqual({
      ok: true,
      value: { runId: 'run-1', stepId: 'ship', status: 'compensating', reopened: true },
    });
    expect(run.compensationExecution('ship')).toBe(stepExecutionName('run-1', '~undo~ship~r1', 1));
    expect(run.step('ship').compensation).toMatchObject({ round: 1, retriedBy: 'ana', attempts: 0 });
    expect(run.state.run).toMatchObject({ status: 'running', reopened: 1 });
    // The first round's execution has ended: a late word of it changes nothing.
    const late = run.apply({
      kind: 'CompensationEnded',
      stepId: 'ship',
      generation: 1,
      execution: firstRound,
      round: 0,
      attempt: 1,
      outcome: { kind: 'compensated' },
    });
    expect(late).toEqual([]);
    expect(typesOf(run.compensate('ship', { kind: 'compensated' }))).toEqual([
      'CompensationEnded:ship',
      'CompensationStarted:pay',
    ]);
    run.compensate('pay', { kind: 'compensated' });
    expect(run.state.run.terminal).toMatchObject({ state: 'failed', evidence: { compensated: ['ship', 'pay'] } });
  });

  it('takes a resolution by hand with its note, and moves on to the next compensation', () => {
    const run = saga();
    run.compensate('ship', { kind: 'failed', error: undoFailure });
    const events = run.apply({
      kind: 'ActOnCompensation',
      stepId: 'ship',
      action: { kind: 'resolve', note: 'refunded by phone' },
      by: 'bob',
    });
    expect(typesOf(events)).toEqual(['CompensationEnded:ship', 'RunReopened', 'CompensationStarted:pay']);
    expect(run.step('ship')).toMatchObject({
      status: 'compensated',
      compensation: { resolution: { by: 'bob', note: 'refunded by phone' }, error: { code: 'E_REFUND' } },
    });
    expect(run.lastReply).toMatchObject({ ok: true, value: { status: 'compensated', reopened: true } });
  });

  it('refuses an action on a compensation that has not failed (409), or on a step it does not have (404)', () => {
    const run = saga();
    for (const stepId of ['ship', 'pay', 'check']) {
      expect(run.apply({ kind: 'ActOnCompensation', stepId, action: { kind: 'retry' }, by: 'ana' })).toEqual([]);
      expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_NOT_COMPENSATION_FAILED' });
    }
    run.apply({ kind: 'ActOnCompensation', stepId: 'nope', action: { kind: 'retry' }, by: 'ana' });
    expect(run.lastReply).toMatchObject({ ok: false, status: 404 });
  });

  it('refuses an action in a cancelled run', () => {
    const run = saga();
    run.compensate('ship', { kind: 'failed', error: undoFailure });
    run.apply({ kind: 'CancelRun', compensate: false, by: 'ana' });
    expect(run.state.run.status).toBe('cancelled');
    const action = { kind: 'resolve', note: 'done' } as const;
    expect(run.apply({ kind: 'ActOnCompensation', stepId: 'ship', action, by: 'ana' })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_NOT_COMPENSATION_FAILED' });
  });
});

describe('a cancel with compensation', () => {
  it('closes what is open, undoes the segment most recent first, and ends cancelled after the last compensation', () => {
    const run = saga('runs');
    const events = run.apply({ kind: 'CancelRun', compensate: true, by: 'ana' });
    expect(typesOf(events)).toEqual(['CancelBegun', 'StepClosed:check', 'CompensationStarted:ship']);
    expect(run.state.run.status).toBe('running');
    expect(typesOf(run.compensate('ship', { kind: 'compensated' }))).toEqual([
      'CompensationEnded:ship',
      'CompensationStarted:pay',
    ]);
    expect(typesOf(run.compensate('pay', { kind: 'compensated' }))).toEqual(['CompensationEnded:pay', 'RunFinished']);
    expect(run.state.run.terminal).toMatchObject({
      state: 'cancelled',
      evidence: { requestedBy: 'ana', compensated: ['ship', 'pay'] },
    });
  });

  it('stays a cancel through a failed compensation resolved by hand', () => {
    const run = saga('runs');
    run.apply({ kind: 'CancelRun', compensate: true, by: 'ana' });
    run.compensate('ship', { kind: 'failed', error: undoFailure });
    expect(run.state.run.terminal).toMatchObject({ state: 'paused', reason: 'compensation_failed' });
    const action = { kind: 'resolve', note: 'cancelled the shipment by hand' } as const;
    run.apply({ kind: 'ActOnCompensation', stepId: 'ship', action, by: 'bob' });
    expect(run.status('pay')).toBe('compensating');
    run.compensate('pay', { kind: 'compensated' });
    expect(run.state.run.terminal).toMatchObject({ state: 'cancelled', evidence: { requestedBy: 'ana' } });
  });
});
