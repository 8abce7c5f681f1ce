import { describe, expect, it } from 'vitest';
import { DrivenRun, planOf, typesOf } from '../../../support/decider.ts';

const chain = planOf([
  { id: 'a' },
  { id: 'b', dependsOn: ['a'] },
  { id: 'c', dependsOn: ['a'] },
  { id: 'd', dependsOn: ['b', 'c'] },
]);

describe('the run decider, on the happy path', () => {
  it('starts the steps that wait for nothing when the run starts', () => {
    const run = new DrivenRun();
    const events = run.apply({ kind: 'StartRun', plan: chain });
    expect(typesOf(events)).toEqual(['RunStarted', 'StepStarted:a']);
    expect(run.state.run.status).toBe('running');
    expect(run.status('b')).toBe('pending');
  });

  it('starts each dependent once the last step it waits for succeeded, and completes the run', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: chain });
    expect(typesOf(run.succeed('a'))).toEqual(['StepSucceeded:a', 'StepStarted:b', 'StepStarted:c']);
    expect(typesOf(run.succeed('b'))).toEqual(['StepSucceeded:b']);
    expect(typesOf(run.succeed('c'))).toEqual(['StepSucceeded:c', 'StepStarted:d']);
    const last = run.succeed('d');
    expect(typesOf(last)).toEqual(['StepSucceeded:d', 'RunFinished']);
    expect(run.state.run.status).toBe('complete');
    expect(run.state.run.terminal?.reason).toBe('completed');
  });

  it('changes nothing when the same attempt is reported twice', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: chain });
    run.succeed('a');
    expect(run.succeed('a')).toEqual([]);
  });
});

describe('the run decider, on failures', () => {
  it('retries a retryable failure, then fails the step and blocks what waits for it', () => {
    const run = new DrivenRun();
    run.apply({
      kind: 'StartRun',
      plan: planOf([
        { id: 'a', maxRetries: 1 },
        { id: 'b', dependsOn: ['a'] },
      ]),
    });
    expect(typesOf(run.fail('a', { code: 'E_X', message: 'boom' }, 1))).toEqual(['StepRetrying:a']);
    expect(run.status('a')).toBe('retrying');
    const events = run.fail('a', { code: 'E_X', message: 'boom' }, 2);
    expect(typesOf(events)).toEqual(['StepFailed:a', 'StepBlocked:b', 'RunFinished']);
    expect(run.state.run.terminal).toMatchObject({ state: 'failed', reason: 'step_failed' });
  });

  it('does not retry a permanent failure', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }]) });
    expect(typesOf(run.fail('a', { code: 'E_X', message: 'no', retryable: false }))).toEqual([
      'StepFailed:a',
      'RunFinished',
    ]);
  });

  it('fails the attempt under way when the execution dies during a retry (not the one before it)', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a', maxRetries: 2 }]) });
    run.fail('a', { code: 'E_X', message: 'boom' }, 1);
    const died = { code: 'E_EXECUTOR', message: 'crashed', retryable: true };
    run.apply({ kind: 'ExecutionFailed', stepId: 'a', generation: 1, attempt: null, error: died });
    expect(run.step('a')).toMatchObject({ status: 'retrying', attempts: 2 });
    run.apply({ kind: 'ExecutionFailed', stepId: 'a', generation: 1, attempt: null, error: died });
    expect(run.step('a')).toMatchObject({ status: 'failed', attempts: 3 });
  });
});

describe('the run decider, on a cancel', () => {
  it('closes every open step and ends the run cancelled, naming who asked', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: chain });
    const events = run.apply({ kind: 'CancelRun', compensate: false, by: 'ana' });
    expect(typesOf(events)).toEqual(['StepClosed:a', 'StepClosed:b', 'StepClosed:c', 'StepClosed:d', 'RunFinished']);
    expect(run.state.run.terminal).toMatchObject({ state: 'cancelled', evidence: { requestedBy: 'ana' } });
  });

  it('keeps what an attempt under way did as evidence once its step was closed', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: chain });
    const execution = run.execution('a');
    run.apply({ kind: 'CancelRun', compensate: false, by: null });
    const events = run.apply({
      kind: 'AttemptEnded',
      stepId: 'a',
      generation: 1,
      execution,
      attempt: 1,
      outcome: { kind: 'succeeded', confidence: null },
      note: 'attempt 1 answered',
    });
    expect(typesOf(events)).toEqual(['StepEvidence:a']);
    expect(run.status('a')).toBe('cancelled');
  });
});

describe('the run decider, on a run budget', () => {
  it('starts no dependent once the run budget is spent, and ends the run when nothing is in flight', () => {
    const run = new DrivenRun();
    run.apply({
      kind: 'StartRun',
      plan: planOf([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }], { budget: { maxTokens: 100 } }),
    });
    const events = run.apply({
      kind: 'AttemptEnded',
      stepId: 'a',
      generation: 1,
      execution: run.execution('a'),
      attempt: 1,
      outcome: { kind: 'succeeded', confidence: null },
      note: 'spent it all',
      usage: { tokens: 150, costUsd: 0 },
    });
    expect(typesOf(events)).not.toContain('StepStarted:b');
    expect(run.status('b')).toBe('cancelled');
    expect(run.state.run.terminal).toMatchObject({ state: 'failed', reason: 'budget_exhausted' });
  });
});
