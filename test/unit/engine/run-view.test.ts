import { describe, expect, it } from 'vitest';
import { deriveRunStatus, isWaitingForPeople, progress } from '../../../shared/engine/run-view.ts';

describe('deriveRunStatus', () => {
  it('shows paused when nothing moves and someone has to decide', () => {
    expect(deriveRunStatus('running', ['succeeded', 'awaiting_approval', 'pending'])).toBe('paused');
  });

  it('stays running while anything is running, ready or retrying', () => {
    for (const moving of ['running', 'ready', 'retrying'] as const)
      expect(deriveRunStatus('running', ['awaiting_approval', moving])).toBe('running');
  });

  it('stays running when nobody is asked anything', () => {
    expect(deriveRunStatus('running', ['succeeded', 'pending'])).toBe('running');
  });

  it('shows a stored status other than running as it is', () => {
    expect(deriveRunStatus('complete', ['awaiting_approval'])).toBe('complete');
    expect(deriveRunStatus('paused', ['running'])).toBe('paused');
  });
});

describe('isWaitingForPeople', () => {
  it('is false for no steps', () => {
    expect(isWaitingForPeople([])).toBe(false);
  });
});

describe('progress', () => {
  it('counts finished steps without superseded ones', () => {
    const statuses = ['succeeded', 'failed', 'running', 'superseded', 'blocked'] as const;
    expect(progress(statuses)).toEqual({ done: 3, total: 4 });
  });
});
