import { describe, expect, it } from 'vitest';
import { decideReplanWatch, type ReplanWatchInput } from '../../../shared/engine/replan/watch.ts';

const FAILED_AT = Date.parse('2026-12-02T08:00:00.000Z');

const input = (over: Partial<ReplanWatchInput> = {}): ReplanWatchInput => ({
  run: { moving: true, terminal: false, cancelling: false },
  step: { status: 'failed', generation: 2, finishedAt: new Date(FAILED_AT).toISOString() },
  generation: 2,
  declined: false,
  revisionPending: false,
  now: FAILED_AT + 30_000,
  watchSeconds: 20,
  ...over,
});

describe('decideReplanWatch', () => {
  it('declines a failure still unanswered once the watch time after it has passed', () => {
    expect(decideReplanWatch(input())).toEqual({ kind: 'unanswered' });
  });

  it('waits the whole seconds left when the watch time has not passed yet', () => {
    expect(decideReplanWatch(input({ now: FAILED_AT + 12_500 }))).toEqual({ kind: 'wait', seconds: 8 });
    expect(decideReplanWatch(input({ now: FAILED_AT + 19_999 }))).toEqual({ kind: 'wait', seconds: 1 });
  });

  it('counts the watch time from now when the failure time is unknown', () => {
    expect(decideReplanWatch(input({ step: { status: 'failed', generation: 2 } }))).toEqual({
      kind: 'wait',
      seconds: 20,
    });
  });

  it.each([
    ['the failure was declined', { declined: true }],
    ['a revision waits for a person', { revisionPending: true }],
    ['a revision moved the step to a new generation', { step: { status: 'pending', generation: 3 } }],
    ['the step runs again in the same generation record', { step: { status: 'running', generation: 2 } }],
    ['the step is gone from the run', { step: undefined }],
    ['the run ended', { run: { moving: false, terminal: true, cancelling: false } }],
    ['the run is paused for a person', { run: { moving: true, terminal: true, cancelling: false } }],
    ['the run is being cancelled', { run: { moving: true, terminal: false, cancelling: true } }],
  ] as const)('has nothing to watch when %s', (_, over) => {
    expect(decideReplanWatch(input(over as Partial<ReplanWatchInput>))).toEqual({ kind: 'answered' });
  });
});
