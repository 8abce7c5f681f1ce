import { describe, expect, it } from 'vitest';
import { letsAttemptsStart } from '../../../shared/engine/run/rules/flow.ts';
import {
  CLAIMABLE_STEP_STATUSES,
  IN_FLIGHT_STEP_STATUSES,
  isBeingCancelled,
  isOpenStepStatus,
  isTerminalStepStatus,
  letsStepsMove,
  OPEN_STEP_STATUSES,
  TERMINAL_STEP_STATUSES,
} from '../../../shared/engine/statuses.ts';
import { RUN_STATUSES, STEP_STATUSES } from '../../../shared/plan/schema.ts';

describe('step statuses', () => {
  it('splits every step status into exactly one of open and terminal', () => {
    for (const status of STEP_STATUSES) expect(isOpenStepStatus(status)).not.toBe(isTerminalStepStatus(status));
    expect(OPEN_STEP_STATUSES.size + TERMINAL_STEP_STATUSES.size).toBe(STEP_STATUSES.length);
  });

  it('counts unclaimed and in-flight steps as open, and no step as both unclaimed and in flight', () => {
    for (const status of CLAIMABLE_STEP_STATUSES) expect(isOpenStepStatus(status)).toBe(true);
    for (const status of IN_FLIGHT_STEP_STATUSES) {
      expect(isOpenStepStatus(status)).toBe(true);
      expect(CLAIMABLE_STEP_STATUSES).not.toContain(status);
    }
  });
});

describe('run statuses', () => {
  it('lets steps move only in a running or paused run, never while planning or once finished', () => {
    expect(RUN_STATUSES.filter(letsStepsMove)).toEqual(['running', 'paused']);
  });

  it('lets attempts start only where steps move and no cancellation has begun', () => {
    expect(RUN_STATUSES.filter((status) => letsAttemptsStart({ status }))).toEqual(['running', 'paused']);
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
});
