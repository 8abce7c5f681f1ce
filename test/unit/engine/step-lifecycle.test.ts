import { describe, expect, it } from 'vitest';
import {
  type AttemptOutcome,
  attemptRecordPlace,
  CARRIED_ATTEMPT_MAX_CHARS,
  decideAttemptOutcome,
  STEP_TRANSITIONS,
  transitionCondition,
} from '../../../shared/engine/step-lifecycle.ts';
import type { StepError } from '../../../shared/plan/schema.ts';

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

describe('the succeedCarrying transition', () => {
  it('moves only a step whose first attempt is in flight to succeeded', () => {
    expect(STEP_TRANSITIONS.succeedCarrying.to).toBe('succeeded');
    expect(transitionCondition('succeedCarrying', 3)).toEqual({ generation: 3, from: ['running'] });
    expect(transitionCondition('succeed', 3).from).toEqual(['running', 'retrying', 'awaiting_approval']);
  });
});
