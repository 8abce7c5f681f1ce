import { describe, expect, it } from 'vitest';
import { describeResumed } from '../../../infra/local/resume.ts';

describe('describeResumed', () => {
  it('says nothing when nothing was resumed', () => {
    expect(describeResumed({ executions: [], started: [] })).toEqual([]);
  });

  it('counts the run and step executions and says where each step carries on', () => {
    const lines = describeResumed({
      executions: [
        { machine: 'run', name: 'run-r', state: 'AwaitRunFinished', kind: 'token', remainingMs: 86_000_000 },
        { machine: 'step', name: 'r-a-g1', state: 'RunStep', kind: 'run' },
        { machine: 'step', name: 'r-b-g1', state: 'Backoff', kind: 'wait', remainingMs: 1500 },
        { machine: 'step', name: 'r-c-g2', state: 'AwaitDecision', kind: 'token', remainingMs: 60_000 },
      ],
      started: [{ runId: 'r', stepId: 'd', generation: 1 }],
    });
    expect(lines).toEqual([
      'resumed 1 run execution(s) and 4 step execution(s) from the data directory',
      '  r-a-g1: carries on at RunStep',
      '  r-b-g1: waits out its backoff (1.5 s left)',
      '  r-c-g2: waits for a decision again (60.0 s left)',
      '  r d g1: started again (open in the store)',
    ]);
  });
});
