import { describe, expect, it } from 'vitest';
import {
  awaitsDecision,
  CLAIMABLE_STEP_STATUSES,
  COMPENSATION_TRANSITIONS,
  canTransition,
  IN_FLIGHT_STEP_STATUSES,
  isBeingCancelled,
  isOpenStepStatus,
  isTerminalRunStatus,
  isTerminalStepStatus,
  leftOpenByCancel,
  letsAttemptsStart,
  letsStepsMove,
  OPEN_STEP_STATUSES,
  TERMINAL_STEP_STATUSES,
  takesInvalidation,
  transitionSources,
} from '../../../shared/engine/statuses.ts';
import { RUN_STATUSES, STEP_STATUSES } from '../../../shared/plan/schema.ts';

describe('step statuses', () => {
  it('splits every step status into exactly one of open and terminal', () => {
    for (const status of STEP_STATUSES) expect(isOpenStepStatus(status)).not.toBe(isTerminalStepStatus(status));
    expect(OPEN_STEP_STATUSES.size + TERMINAL_STEP_STATUSES.size).toBe(STEP_STATUSES.length);
  });

  it('allows no transition out of a terminal status but the compensation path', () => {
    const compensation = new Set(COMPENSATION_TRANSITIONS.map(([from, to]) => `${from} -> ${to}`));
    for (const from of TERMINAL_STEP_STATUSES)
      for (const to of STEP_STATUSES)
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(compensation.has(`${from} -> ${to}`));
  });

  it('compensates only a succeeded step, once, unless a person retries a compensation that failed', () => {
    expect(canTransition('succeeded', 'compensating')).toBe(true);
    expect(canTransition('failed', 'compensating')).toBe(false);
    expect(canTransition('compensated', 'compensating')).toBe(false);
    // A person's answer to a failed compensation: try it again, or resolve it by hand.
    expect(canTransition('compensation_failed', 'compensating')).toBe(true);
    expect(canTransition('compensation_failed', 'compensated')).toBe(true);
    expect(canTransition('compensation_failed', 'succeeded')).toBe(false);
  });

  it('allows the paths of the step machine', () => {
    expect(canTransition('pending', 'ready')).toBe(true);
    expect(canTransition('ready', 'running')).toBe(true);
    expect(canTransition('running', 'retrying')).toBe(true);
    expect(canTransition('retrying', 'failed')).toBe(true);
    expect(canTransition('running', 'awaiting_approval')).toBe(true);
    expect(canTransition('awaiting_approval', 'succeeded')).toBe(true);
    expect(canTransition('pending', 'blocked')).toBe(true);
    expect(canTransition('ready', 'skipped')).toBe(true);
  });

  it('refuses shortcuts the machine never takes', () => {
    expect(canTransition('pending', 'succeeded')).toBe(false);
    expect(canTransition('running', 'pending')).toBe(false);
    expect(canTransition('running', 'blocked')).toBe(false);
    expect(canTransition('running', 'skipped')).toBe(false);
  });

  it('lists the sources of a transition consistently with canTransition', () => {
    for (const to of STEP_STATUSES)
      for (const from of STEP_STATUSES) expect(transitionSources(to).includes(from)).toBe(canTransition(from, to));
  });

  it('claims only unclaimed open steps and takes results only from claimed ones', () => {
    for (const status of CLAIMABLE_STEP_STATUSES) expect(isOpenStepStatus(status)).toBe(true);
    for (const status of IN_FLIGHT_STEP_STATUSES) {
      expect(isOpenStepStatus(status)).toBe(true);
      expect(CLAIMABLE_STEP_STATUSES).not.toContain(status);
      expect(canTransition(status, 'succeeded')).toBe(true);
      expect(canTransition(status, 'failed')).toBe(true);
    }
  });
});

describe('run statuses', () => {
  it('treats complete, failed and cancelled as terminal and paused as live', () => {
    const terminal = RUN_STATUSES.filter(isTerminalRunStatus);
    expect(terminal).toEqual(['complete', 'failed', 'cancelled']);
  });

  it('lets steps move only in a running or paused run, never while planning or once finished', () => {
    expect(RUN_STATUSES.filter(letsStepsMove)).toEqual(['running', 'paused']);
  });

  it('lets attempts start only where steps move and no cancellation has begun', () => {
    expect(RUN_STATUSES.filter((status) => letsAttemptsStart({ status }))).toEqual(['running', 'paused']);
    expect(RUN_STATUSES.filter((status) => letsAttemptsStart({ status, cancelling: true }))).toEqual([]);
    expect(RUN_STATUSES.filter((status) => letsAttemptsStart({ status, cancelCompensation: true }))).toEqual([]);
  });

  it('reads a cancel mark only on a run that has not ended (a finished one lost the race to its end)', () => {
    expect(RUN_STATUSES.filter((status) => isBeingCancelled({ status, cancelling: true }))).toEqual([
      'running',
      'paused',
    ]);
    expect(RUN_STATUSES.filter((status) => isBeingCancelled({ status, cancelCompensation: true }))).toEqual([
      'running',
      'paused',
    ]);
    expect(RUN_STATUSES.filter((status) => isBeingCancelled({ status }))).toEqual([]);
  });

  it('finds a step left open by a cancel only unclaimed, in its generation, in a run being cancelled', () => {
    const ready = { status: 'ready', generation: 2 } as const;
    expect(leftOpenByCancel({ status: 'running', cancelling: true }, ready, 2)).toBe(true);
    expect(leftOpenByCancel({ status: 'paused', cancelCompensation: true }, { ...ready, status: 'pending' }, 2)).toBe(
      true,
    );
    expect(leftOpenByCancel({ status: 'cancelled', cancelling: true }, ready, 2)).toBe(false);
    expect(leftOpenByCancel({ status: 'running' }, ready, 2)).toBe(false);
    expect(leftOpenByCancel({ status: 'complete', cancelling: true }, ready, 2)).toBe(false);
    expect(leftOpenByCancel({ status: 'running', cancelling: true }, ready, 1)).toBe(false);
    expect(leftOpenByCancel({ status: 'running', cancelling: true }, { ...ready, claimedBy: 'x' }, 2)).toBe(false);
    expect(leftOpenByCancel({ status: 'running', cancelling: true }, { ...ready, status: 'cancelled' }, 2)).toBe(false);
  });

  it('takes an invalidation of a started run that is neither cancelled nor being cancelled', () => {
    expect(RUN_STATUSES.filter((status) => takesInvalidation({ status }))).toEqual(
      RUN_STATUSES.filter((s) => s !== 'planning' && s !== 'cancelled'),
    );
    expect(RUN_STATUSES.filter((status) => takesInvalidation({ status, cancelling: true }))).toEqual(
      RUN_STATUSES.filter((s) => s !== 'planning' && s !== 'cancelled' && !letsStepsMove(s)),
    );
  });

  it('counts a decision on a gate only while its run lets steps move, no cancel has begun and the step still waits', () => {
    const waiting = { status: 'awaiting_approval', generation: 3 } as const;
    expect(awaitsDecision({ status: 'paused' }, waiting, 3)).toBe(true);
    expect(awaitsDecision({ status: 'running' }, { ...waiting, status: 'running' }, 3)).toBe(true);
    expect(awaitsDecision({ status: 'paused', cancelling: true }, waiting, 3)).toBe(false);
    expect(awaitsDecision({ status: 'running', cancelCompensation: true }, waiting, 3)).toBe(false);
    expect(awaitsDecision({ status: 'cancelled' }, waiting, 3)).toBe(false);
    expect(awaitsDecision({ status: 'paused' }, waiting, 2)).toBe(false);
    expect(awaitsDecision({ status: 'paused' }, { ...waiting, status: 'cancelled' }, 3)).toBe(false);
    expect(awaitsDecision(undefined, waiting, 3)).toBe(false);
    expect(awaitsDecision({ status: 'paused' }, undefined, 3)).toBe(false);
  });
});
