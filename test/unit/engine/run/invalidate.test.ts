import { describe, expect, it } from 'vitest';
import { DrivenRun, planOf, typesOf } from '../../../support/decider.ts';

const fan = planOf([{ id: 'r' }, { id: 'a', dependsOn: ['r'] }, { id: 'b', dependsOn: ['r'] }, { id: 'x' }]);

function completed(): DrivenRun {
  const run = new DrivenRun();
  run.apply({ kind: 'StartRun', plan: fan });
  run.succeed('r');
  run.succeed('x');
  run.succeed('a');
  run.succeed('b');
  expect(run.state.run.status).toBe('complete');
  return run;
}

describe('an invalidation', () => {
  it('reopens a finished run, moves the step and its downstream to a new generation and starts the root', () => {
    const run = completed();
    const events = run.apply({ kind: 'Invalidate', roots: ['r'], reason: 'changed', key: 'k1' });
    expect(typesOf(events)).toEqual([
      'RunReopened',
      'StepMoved:r',
      'StepMoved:a',
      'StepMoved:b',
      'InvalidationApplied',
      'StepStarted:r',
    ]);
    expect(run.lastReply).toEqual({ ok: true, value: { stepIds: ['r', 'a', 'b'], reopened: true } });
    expect(run.step('a')).toMatchObject({ generation: 2, status: 'pending', remaining: 1 });
    expect(run.step('x')).toMatchObject({ generation: 1, status: 'succeeded' });
    expect(run.step('r').history?.[0]).toMatchObject({ generation: 1, status: 'succeeded' });
  });

  it('costs one event per moved step however wide the fan-out', () => {
    const width = 2000;
    const run = new DrivenRun();
    const steps = [{ id: 'r' }, ...Array.from({ length: width }, (_, i) => ({ id: `s${i}`, dependsOn: ['r'] }))];
    run.apply({ kind: 'StartRun', plan: planOf(steps) });
    run.succeed('r');
    for (let i = 0; i < width; i++) run.succeed(`s${i}`);
    const events = run.apply({ kind: 'Invalidate', roots: ['r'], reason: 'changed', key: 'k' });
    expect(events.length).toBe(width + 4);
    run.succeed('r');
    expect(run.events.filter((e) => e.type === 'StepStarted').length).toBe(2 * (width + 1));
  });

  it('completes the reopened run again once the new generations succeed', () => {
    const run = completed();
    run.apply({ kind: 'Invalidate', roots: ['r'], reason: 'changed', key: 'k1' });
    run.succeed('r');
    run.succeed('a');
    expect(typesOf(run.succeed('b'))).toEqual(['StepSucceeded:b', 'RunFinished']);
    expect(run.state.run).toMatchObject({ status: 'complete', reopened: 1 });
    expect(run.state.run.previousTerminals).toHaveLength(1);
  });

  it('ignores a late result of the generation it ended', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: fan });
    const old = run.execution('r');
    run.apply({ kind: 'Invalidate', roots: ['r'], reason: 'changed', key: 'k1' });
    const late = run.apply({
      kind: 'AttemptEnded',
      stepId: 'r',
      generation: 1,
      execution: old,
      attempt: 1,
      outcome: { kind: 'succeeded', confidence: null },
      note: 'late',
    });
    expect(late).toEqual([]);
    expect(run.step('r')).toMatchObject({ generation: 2, status: 'running' });
    expect(run.status('a')).toBe('pending');
  });

  it('blocks a moved step whose upstream outside the scope failed', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'f' }, { id: 'g' }, { id: 'h', dependsOn: ['f', 'g'] }]) });
    run.succeed('g');
    run.fail('f', { code: 'E_X', message: 'no', retryable: false });
    expect(run.state.run.status).toBe('failed');
    const events = run.apply({ kind: 'Invalidate', roots: ['g'], reason: 'changed', key: 'k1' });
    expect(typesOf(events)).toEqual([
      'RunReopened',
      'StepMoved:g',
      'StepMoved:h',
      'InvalidationApplied',
      'StepBlocked:h',
      'StepStarted:g',
    ]);
  });

  it('refuses a run that was cancelled, and a step the plan does not have', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: fan });
    expect(run.apply({ kind: 'Invalidate', roots: ['nope'], reason: 'x', key: 'k' })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 404, code: 'E_NOT_FOUND' });
    run.apply({ kind: 'CancelRun', compensate: false, by: null });
    expect(run.apply({ kind: 'Invalidate', roots: ['r'], reason: 'x', key: 'k' })).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 409, code: 'E_CONFLICT' });
  });

  it('moves only watchers whose generation ran before a reported change', () => {
    const run = completed();
    const before = new Date(Date.parse(run.step('r').startedAt ?? '') - 1000).toISOString();
    run.apply({
      kind: 'Invalidate',
      roots: ['r'],
      reason: 'resource',
      key: 'e1',
      resourceChange: { changedAt: before },
    });
    expect(run.lastReply).toEqual({ ok: true, value: { stepIds: [], reopened: false } });
    run.apply({ kind: 'Invalidate', roots: ['r'], reason: 'resource', key: 'e2', resourceChange: {} });
    expect(run.lastReply).toMatchObject({ ok: true, value: { reopened: true } });
  });
});

describe('a repeated invalidation', () => {
  it('moves nothing again when its key was taken already, even after the run was cancelled', () => {
    const run = completed();
    run.apply({ kind: 'Invalidate', roots: ['r'], reason: 'changed', key: 'k1' });
    expect(run.apply({ kind: 'Invalidate', roots: ['r'], reason: 'changed', key: 'k1' })).toEqual([]);
    expect(run.lastReply).toEqual({ ok: true, value: { stepIds: [], reopened: false, repeat: true } });
    expect(run.step('r').generation).toBe(2);
    run.apply({ kind: 'CancelRun', compensate: false, by: null });
    run.apply({ kind: 'Invalidate', roots: ['r'], reason: 'changed', key: 'k1' });
    expect(run.lastReply).toMatchObject({ ok: true, value: { repeat: true } });
  });
});
