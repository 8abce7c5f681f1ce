/**
 * An ended run keeps its steps counted by status on its record (`endCounts`), so a listing shows it without reading
 * its head; a reopening drops them, and the run's next end counts again.
 */
import { describe, expect, it } from 'vitest';
import { DrivenRun, planOf } from '../../../support/decider.ts';

const ended = (run: DrivenRun, id: string) =>
  run.apply({
    kind: 'AttemptEnded',
    stepId: id,
    generation: run.step(id).generation,
    execution: run.execution(id),
    attempt: 1,
    outcome: { kind: 'succeeded', confidence: null },
    note: 'done',
  });

describe('a run’s counts at its end', () => {
  it('are kept on the run record when it ends, dropped when it reopens, and counted again at its next end', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan: planOf([{ id: 'a' }, { id: 'b', dependsOn: ['a'] }]) });
    expect(run.state.run.endCounts).toBeUndefined();
    ended(run, 'a');
    ended(run, 'b');
    expect(run.state.run.status).toBe('complete');
    expect(run.state.run.endCounts).toEqual({ succeeded: 2 });

    run.apply({ kind: 'Invalidate', roots: ['b'], reason: 'stale', key: 'k1' });
    expect(run.state.run.status).toBe('running');
    expect(run.state.run.endCounts).toBeUndefined();
    ended(run, 'b');
    expect(run.state.run.endCounts).toEqual({ succeeded: 2 });
  });
});
