/**
 * What a run's end closes (found by the simulation): the approvals of the steps it closes, whoever ends the run
 * (`npm run sim -- --seed 667`: a fail-run failure left a gate's approval pending, and a late decision announced
 * its expiry after RunFinished); and every step still open when a fail-run failure ends the run, also after an
 * invalidation reopened it (`--seed 1811`: a step started by the reopening stayed running in the failed run and
 * succeeded after RunFinished).
 */
import { describe, expect, it } from 'vitest';
import { DrivenRun, planOf } from '../../../support/decider.ts';

const OPEN = ['pending', 'ready', 'running', 'retrying', 'awaiting_approval'];

describe('the run decider, ending a run', () => {
  it('closes the approvals of the steps a fail-run failure closes', () => {
    const run = new DrivenRun();
    run.apply({
      kind: 'StartRun',
      plan: planOf([
        { id: 'a', onFailure: 'fail-run' },
        { id: 'g', target: 'human:p', approval: { question: 'ok?', timeoutSeconds: 60 } },
      ]),
    });
    run.await('g');
    run.fail('a', { code: 'E_X', message: 'no', retryable: false });
    expect(run.state.run.status).toBe('failed');
    expect(run.approvals('g').map((a) => a.status)).toEqual(['expired']);
    run.advance(120);
    expect(run.decide(run.approvals('g')[0]?.approvalId ?? '', 'approve')).toEqual([]);
    expect(run.lastReply).toMatchObject({ ok: false, status: 410 });
  });

  it('leaves no step open when a fail-run failure ends a run an invalidation reopened', () => {
    const run = new DrivenRun();
    run.apply({
      kind: 'StartRun',
      plan: planOf([{ id: 'a', onFailure: 'fail-run', maxRetries: 3 }, { id: 'b' }], {
        budget: { maxTokens: 100, onExhausted: 'fail' },
      }),
    });
    run.apply({
      kind: 'AttemptEnded',
      stepId: 'a',
      generation: 1,
      execution: run.execution('a'),
      attempt: 1,
      outcome: { kind: 'failed', error: { code: 'E_X', message: 'flaky', retryable: true } },
      usage: { tokens: 150, costUsd: 0 },
      note: 'failed',
    });
    expect(run.state.run.status).toBe('failed');
    run.apply({ kind: 'Invalidate', roots: ['b'], reason: 'again', key: 'k' });
    expect(run.state.run.status).toBe('failed');
    expect([...run.state.steps.values()].filter((s) => OPEN.includes(s.status)).map((s) => s.stepId)).toEqual([]);
  });
});
