import { describe, expect, it } from 'vitest';
import {
  attemptBase,
  clipReturnedMessage,
  execNote,
  failedAttempt,
  judgeExpectation,
  MAX_RECORDED_INPUT_BYTES,
  withVerdict,
} from '../../../shared/engine/attempt-record.ts';
import type { AttemptRecord, StepRecord } from '../../../shared/ports/store.ts';

const step = { runId: 'r', stepId: 's', generation: 2 } as StepRecord;
const at = { step, n: 1, target: 'tool:pay', startedAt: 't0', finishedAt: 't1' };
const failed = (code: string, message: string): AttemptRecord =>
  failedAttempt(at, { amount: 3 }, { binding: 'http' }, { code, message, retryable: true });

describe('attemptBase', () => {
  it('copies a small input onto the record', () => {
    expect(attemptBase(step, 1, 'tool:pay', 't0', { amount: 3 })).toEqual({
      fields: {
        runId: 'r',
        stepId: 's',
        generation: 2,
        attempt: 1,
        target: 'tool:pay',
        startedAt: 't0',
        input: { amount: 3 },
      },
      inputEvidence: {},
    });
  });

  it('notes an input too large to copy by its size instead', () => {
    const input = 'x'.repeat(MAX_RECORDED_INPUT_BYTES + 1);
    const { fields, inputEvidence } = attemptBase(step, 1, 'tool:pay', 't0', input);
    expect(fields).not.toHaveProperty('input');
    expect(inputEvidence).toEqual({ inputBytes: MAX_RECORDED_INPUT_BYTES + 3, inputRecorded: false });
  });
});

describe('judgeExpectation', () => {
  const expectation = { failure: { code: '^E_DECLINED$' } };

  it('turns a matching failure into the attempt’s success, the failure its output', () => {
    const judged = judgeExpectation(expectation, failed('E_DECLINED', 'card declined'));
    expect(judged.verdict).toEqual({ verdict: 'pass' });
    expect(judged.attempt).toMatchObject({ outcome: 'succeeded', output: { failure: { code: 'E_DECLINED' } } });
    expect(judged.attempt).not.toHaveProperty('error');
  });

  it('fails a success of a step that expected a failure, and leaves another failure as it is', () => {
    const success = { ...failed('E_X', 'x'), outcome: 'succeeded', output: 1 } as AttemptRecord;
    expect(judgeExpectation(expectation, success).verdict?.verdict).toBe('fail');
    const other = failed('E_TIMEOUT', 'slow');
    expect(judgeExpectation(expectation, other)).toEqual({ attempt: other, verdict: undefined });
  });
});

describe('withVerdict and execNote', () => {
  it('writes a failed call with a fail verdict and the revision it ran under', () => {
    expect(withVerdict(failed('E_X', 'x'), undefined, 3)).toMatchObject({ revision: 3, verdict: 'fail' });
  });

  it('says in one line how an attempt went', () => {
    expect(execNote(failed('E_TIMEOUT', 'slow'))).toBe('attempt 1 of tool:pay failed (retryable): E_TIMEOUT slow');
    const ok = {
      ...failed('E_X', 'x'),
      outcome: 'succeeded',
      confidence: 0.9,
      evidence: { binding: 'http', durationMs: 12 },
    };
    expect(execNote(ok as AttemptRecord)).toBe('attempt 1: tool:pay via http succeeded in 12 ms confidence 0.9');
  });

  it('clips a capability’s long message to 1,000 characters', () => {
    expect(clipReturnedMessage('m'.repeat(5000))).toHaveLength(1000);
  });
});
