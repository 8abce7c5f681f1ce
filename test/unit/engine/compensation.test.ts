import { describe, expect, it } from 'vitest';
import {
  type CompensationMember,
  type CompensationStepView,
  checkCompensationAction,
  compensatedStepId,
  compensationStepId,
  decideCompensation,
  isCompensationStepId,
} from '../../../shared/engine/compensation.ts';

const member = (id: string, fields: Partial<CompensationMember> = {}): CompensationMember => ({
  id,
  segment: 's',
  mutating: true,
  compensable: true,
  ...fields,
});

const view = (status: CompensationStepView['status'], finishedAt?: string): CompensationStepView => ({
  status,
  ...(finishedAt === undefined ? {} : { finishedAt }),
});

const decide = (members: CompensationMember[], steps: Record<string, CompensationStepView>, cancelAll = false) =>
  decideCompensation({ members, steps: new Map(Object.entries(steps)), cancelAll });

describe('decideCompensation', () => {
  it('has nothing to do while no step of a segment failed', () => {
    const decision = decide([member('a'), member('b')], { a: view('succeeded', 't1'), b: view('running') });
    expect(decision).toEqual({ kind: 'none' });
  });

  it('compensates the most recently finished mutating step first when a step of the segment failed', () => {
    const members = [member('a'), member('b'), member('f', { mutating: false })];
    const steps = { a: view('succeeded', '2026-01-01T00:00:01Z'), b: view('succeeded', '2026-01-01T00:00:02Z') };
    expect(decide(members, { ...steps, f: view('failed') })).toMatchObject({ kind: 'compensate', stepId: 'b' });
    expect(
      decide(members, { ...steps, b: view('compensated', '2026-01-01T00:00:02Z'), f: view('failed') }),
    ).toMatchObject({ kind: 'compensate', stepId: 'a' });
  });

  it('breaks a tie of completion times by plan order, the later step first', () => {
    const members = [member('a'), member('b'), member('f')];
    const same = '2026-01-01T00:00:01Z';
    expect(
      decide(members, { a: view('succeeded', same), b: view('succeeded', same), f: view('failed') }),
    ).toMatchObject({ kind: 'compensate', stepId: 'b' });
  });

  it('waits for steps of the aborting segment still in flight, and cancels its unclaimed ones', () => {
    const members = [member('a'), member('slow', { mutating: false }), member('later'), member('f')];
    const decision = decide(members, {
      a: view('succeeded', 't1'),
      slow: view('running'),
      later: view('pending'),
      f: view('failed'),
    });
    expect(decision).toEqual({ kind: 'wait', waitingFor: ['slow'], cancel: ['later'] });
  });

  it('leaves other segments and steps outside any segment alone', () => {
    const members = [member('a'), member('f'), member('x', { segment: 'other' }), member('y', { segment: undefined })];
    const decision = decide(members, {
      a: view('compensated', 't1'),
      f: view('failed'),
      x: view('succeeded', 't3'),
      y: view('succeeded', 't4'),
    });
    expect(decision).toEqual({ kind: 'done', compensated: ['a'] });
  });

  it('asks a person to act on the rollbackHint of a mutating step without a compensation', () => {
    const members = [member('a', { compensable: false, rollbackHint: 'undo by hand' }), member('f')];
    expect(decide(members, { a: view('succeeded', 't1'), f: view('failed') })).toMatchObject({
      kind: 'hint',
      stepId: 'a',
      hint: 'undo by hand',
    });
  });

  it('stops at a compensation that failed and restarts one under way', () => {
    const members = [member('a'), member('b'), member('f')];
    expect(
      decide(members, { a: view('succeeded', 't1'), b: view('compensation_failed', 't2'), f: view('failed') }),
    ).toMatchObject({ kind: 'failed', stepId: 'b' });
    expect(
      decide(members, { a: view('succeeded', 't1'), b: view('compensating', 't2'), f: view('failed') }),
    ).toMatchObject({ kind: 'compensate', stepId: 'b' });
  });

  it('aborts every segment on a cancellation with compensation, never steps that did not succeed', () => {
    const members = [member('a'), member('b', { segment: 'other' }), member('c')];
    const steps = { a: view('succeeded', 't1'), b: view('succeeded', 't2'), c: view('cancelled') };
    expect(decide(members, steps)).toEqual({ kind: 'none' });
    expect(decide(members, steps, true)).toMatchObject({ kind: 'compensate', stepId: 'b' });
    expect(decide(members, { ...steps, b: view('compensated', 't2') }, true)).toMatchObject({
      kind: 'compensate',
      stepId: 'a',
    });
  });
});

describe('compensation step ids', () => {
  it('names a synthetic step that no plan step id can be', () => {
    const id = compensationStepId('ledger.1');
    expect(isCompensationStepId(id)).toBe(true);
    expect(isCompensationStepId('ledger.1')).toBe(false);
    expect(compensatedStepId(id)).toBe('ledger.1');
    expect(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(id)).toBe(false);
  });

  it("names a person's n-th retry apart from the first run, and reads the step id back from either", () => {
    expect(compensationStepId('ledger.1', 0)).toBe('~undo~ledger.1');
    const retried = compensationStepId('ledger.1', 2);
    expect(retried).toBe('~undo~ledger.1~r2');
    expect(isCompensationStepId(retried)).toBe(true);
    expect(compensatedStepId(retried)).toBe('ledger.1');
  });
});

describe('checkCompensationAction', () => {
  it('lets a person retry or resolve only a compensation_failed step', () => {
    expect(checkCompensationAction('compensation_failed')).toEqual({ ok: true });
    for (const status of ['succeeded', 'compensating', 'compensated', 'failed'] as const)
      expect(checkCompensationAction(status)).toMatchObject({ ok: false, reason: expect.stringContaining(status) });
    expect(checkCompensationAction(undefined)).toMatchObject({ ok: false });
  });
});
