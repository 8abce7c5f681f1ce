/**
 * A run whose budget runs out under `onExhausted: fail` ends failed with nothing left open: a step waiting for a
 * person is closed with it (its execution stopped), as a deadline's failure closes it, instead of staying
 * `awaiting_approval` in a failed run and failing later, after RunFinished (found by the simulation,
 * `npm run sim -- --seed 98`); and what an attempt spent after the run ended is counted without announcing a
 * threshold after RunFinished (`--seed 1811 --faults all@0.05`).
 */
import { describe, expect, it } from 'vitest';
import { DrivenRun, planOf, typesOf } from '../../../support/decider.ts';

describe('the run decider, when the budget runs out', () => {
  it('closes a step that waits for a person when it fails the run', () => {
    const run = new DrivenRun();
    run.apply({
      kind: 'StartRun',
      plan: planOf(
        [
          { id: 'a', target: 'tool:t' },
          { id: 'g', target: 'human:p', approval: { question: 'ok?', timeoutSeconds: 600 } },
        ],
        { budget: { maxTokens: 100, onExhausted: 'fail' } },
      ),
    });
    run.await('g');
    const events = run.apply({
      kind: 'AttemptEnded',
      stepId: 'a',
      generation: 1,
      execution: run.execution('a'),
      attempt: 1,
      outcome: { kind: 'succeeded', confidence: null },
      usage: { tokens: 150, costUsd: 0 },
      note: 'done',
    });
    expect(run.state.run.terminal).toMatchObject({ state: 'failed', reason: 'budget_exhausted' });
    expect(typesOf(events)).toContain('StepClosed:g');
    expect(typesOf(events).indexOf('StepClosed:g')).toBeLessThan(typesOf(events).indexOf('RunFinished'));
    expect(run.status('g')).toBe('cancelled');
    // The gate's late end changes nothing once the run has finished.
    expect(run.timeOut('g')).toEqual([]);
  });
});

describe('the run decider, counting a late attempt', () => {
  it('counts what an attempt spent after its run ended, and announces no threshold then', () => {
    const run = new DrivenRun();
    run.apply({
      kind: 'StartRun',
      plan: planOf([{ id: 'a', onFailure: 'fail-run' }, { id: 'b' }], { budget: { maxTokens: 100 } }),
    });
    run.fail('a', { code: 'E_X', message: 'no', retryable: false });
    expect(run.state.run.status).toBe('failed');
    const events = run.apply({
      kind: 'AttemptEnded',
      stepId: 'b',
      generation: 1,
      execution: run.execution('b'),
      attempt: 1,
      outcome: { kind: 'succeeded', confidence: null },
      usage: { tokens: 90, costUsd: 0 },
      note: 'done, late',
    });
    expect(typesOf(events)).toEqual(['UsageCounted:b', 'StepEvidence:b']);
    expect(run.state.run.usageTokens).toBe(90);
  });
});
