import { describe, expect, it } from 'vitest';
import type { StepStatus } from '../../../shared/plan/schema.ts';
import {
  awaitsReplan,
  declinedReplans,
  declineMember,
  failureKey,
  replanDeclines,
} from '../../../shared/services/coordinator-replan.ts';

const steps = (entries: [string, StepStatus, number?][]) =>
  new Map(entries.map(([stepId, status, generation = 1]) => [stepId, { stepId, status, generation }]));
const decline = (stepId: string, generation = 1) =>
  declineMember({ failure: `${stepId}#${generation}`, stepId, code: 'E_NO_ALTERNATIVE', message: 'nothing else' });

describe('awaitsReplan', () => {
  const expected = ['A', 'B', 'C'];

  it('waits for the replanner while a failed step of the current revision has no answer', () => {
    const current = steps([
      ['A', 'succeeded'],
      ['B', 'failed'],
      ['C', 'blocked'],
    ]);

    expect(awaitsReplan({}, current, expected, 3)).toBe(true);
  });

  it('does not wait once the replanner declined that failure, and waits again for a later generation', () => {
    const run = { replanDeclines: [decline('B', 1)] };

    expect(awaitsReplan(run, steps([['B', 'failed', 1]]), expected, 3)).toBe(false);
    expect(awaitsReplan(run, steps([['B', 'failed', 2]]), expected, 3)).toBe(true);
  });

  it('never waits with replanning off, nor without a failed step, nor for a step outside the revision', () => {
    const failed = steps([['B', 'failed']]);

    expect(awaitsReplan({}, failed, expected, 0)).toBe(false);
    expect(awaitsReplan({}, failed, expected, undefined)).toBe(false);
    expect(awaitsReplan({}, steps([['B', 'blocked']]), expected, 3)).toBe(false);
    expect(awaitsReplan({}, steps([['X', 'failed']]), expected, 3)).toBe(false);
  });
});

describe('replan declines', () => {
  it('round-trips through the set member and ignores members that are not declines', () => {
    const run = { replanDeclines: [decline('B'), 'not json', JSON.stringify({ something: 'else' })] };

    expect(replanDeclines(run)).toEqual([
      { failure: 'B#1', stepId: 'B', code: 'E_NO_ALTERNATIVE', message: 'nothing else' },
    ]);
    expect(declinedReplans(run)).toEqual([
      { stepId: 'B', failure: 'B#1', code: 'E_NO_ALTERNATIVE', message: 'nothing else' },
    ]);
  });

  it('writes the same member for the same decline, whatever the key order it was built with', () => {
    expect(declineMember({ stepId: 'B', message: 'm', code: 'c', failure: 'B#1' })).toBe(
      declineMember({ failure: 'B#1', code: 'c', message: 'm', stepId: 'B' }),
    );
    expect(failureKey({ stepId: 'B', generation: 3 })).toBe('B#3');
  });
});
