import { describe, expect, it } from 'vitest';
import {
  type AttemptOutcome,
  attemptRecordPlace,
  CARRIED_ATTEMPT_MAX_CHARS,
  closeAttempt,
  decideAttemptOutcome,
  orphanedAttemptEnding,
} from '../../../shared/engine/step-lifecycle.ts';
import type { StepError } from '../../../shared/plan/schema.ts';
import type { AttemptRecord } from '../../../shared/ports/store.ts';

const SUCCEED: AttemptOutcome = { kind: 'succeed' };
const ERROR: StepError = { code: 'E_GATEWAY', message: 'down', retryable: true };
const POLICY = { maxRetries: 2, baseSeconds: 1, capSeconds: 60 };
const first = { number: 1, outcome: SUCCEED, spends: false, chars: 400 };

describe('attemptRecordPlace', () => {
  it('puts a small first attempt that succeeds on the step’s success write', () => {
    expect(attemptRecordPlace(first)).toBe('with-success');
    expect(attemptRecordPlace({ ...first, chars: CARRIED_ATTEMPT_MAX_CHARS })).toBe('with-success');
  });

  it('records a later attempt apart: a retry’s repeat must find it before the step moves', () => {
    expect(attemptRecordPlace({ ...first, number: 2 })).toBe('apart');
  });

  it('records an attempt apart when the step does not succeed with it (retry, review, failure)', () => {
    const outcomes: AttemptOutcome[] = [
      decideAttemptOutcome(1, { error: ERROR }, POLICY),
      { kind: 'review', reason: 'low confidence' },
      { kind: 'fail', error: { ...ERROR, retryable: false }, why: 'permanent' },
    ];
    expect(outcomes.map((outcome) => attemptRecordPlace({ ...first, outcome }))).toEqual(['apart', 'apart', 'apart']);
  });

  it('records an attempt apart when its usage must be counted first, or when it is large', () => {
    expect(attemptRecordPlace({ ...first, spends: true })).toBe('apart');
    expect(attemptRecordPlace({ ...first, chars: CARRIED_ATTEMPT_MAX_CHARS + 1 })).toBe('apart');
  });
});

describe('closeAttempt', () => {
  const AT = '2026-12-01T00:00:00.000Z';
  const gate: AttemptRecord = {
    runId: 'r',
    stepId: 'G',
    generation: 1,
    attempt: 1,
    target: 'human:x',
    startedAt: '2026-11-30T00:00:00.000Z',
    outcome: 'running',
    evidence: { gate: true },
  };
  const rejected = { decision: 'reject', comment: 'no', by: 'ann' } as const;

  it('closes a running gate attempt failed with the decision as evidence when it is rejected', () => {
    const closed = closeAttempt(gate, { kind: 'decided', decision: rejected, verdict: 'fail', error: ERROR }, AT);
    expect(closed).toMatchObject({
      outcome: 'failed',
      finishedAt: AT,
      verdict: 'fail',
      error: ERROR,
      evidence: { gate: true, decision: 'reject', decidedBy: 'ann', comment: 'no', verdict: 'fail' },
    });
  });

  it('closes a running gate attempt succeeded when the decision passes', () => {
    const approved = {
      kind: 'decided',
      decision: { decision: 'approve' },
      verdict: 'pass',
      output: { ok: 1 },
    } as const;
    const closed = closeAttempt(gate, approved, AT);
    expect(closed).toMatchObject({
      outcome: 'succeeded',
      verdict: 'pass',
      output: { ok: 1 },
      evidence: { decision: 'approve' },
    });
    expect(closed?.error).toBeUndefined();
  });

  it.each(['expired', 'cancelled', 'invalidated'] as const)('closes it failed with the ending when %s', (kind) => {
    const closed = closeAttempt(gate, { kind, error: ERROR }, AT);
    expect(closed).toMatchObject({ outcome: 'failed', finishedAt: AT, error: ERROR, evidence: { ending: kind } });
  });

  it('leaves an attempt that ended already as it is (the first ending written stays)', () => {
    const ended: AttemptRecord = { ...gate, outcome: 'succeeded', finishedAt: AT };
    expect(closeAttempt(ended, { kind: 'cancelled', error: ERROR }, AT)).toBeUndefined();
  });
});

describe('orphanedAttemptEnding', () => {
  const record = { stepId: 'G', generation: 1, outcome: 'running' } as const;

  it('leaves the attempt open while the step still waits in its generation', () => {
    expect(orphanedAttemptEnding({ stepId: 'G', generation: 1, status: 'running' }, record)).toBeUndefined();
    expect(orphanedAttemptEnding({ stepId: 'G', generation: 1, status: 'awaiting_approval' }, record)).toBeUndefined();
  });

  it('closes it cancelled when the step was closed with its run before the record landed', () => {
    const error = { code: 'E_CANCELLED', message: 'the run was cancelled', retryable: false };
    expect(orphanedAttemptEnding({ stepId: 'G', generation: 1, status: 'cancelled', error }, record)).toEqual({
      kind: 'cancelled',
      error,
    });
  });

  it('closes it superseded when a new generation started meanwhile', () => {
    expect(orphanedAttemptEnding({ stepId: 'G', generation: 2, status: 'pending' }, record)).toMatchObject({
      kind: 'invalidated',
      error: { code: 'E_SUPERSEDED' },
    });
  });

  it('does nothing for an attempt that has ended', () => {
    expect(
      orphanedAttemptEnding({ stepId: 'G', generation: 1, status: 'cancelled' }, { ...record, outcome: 'failed' }),
    ).toBeUndefined();
  });
});
