import { describe, expect, it } from 'vitest';
import { retryPolicy } from '../../../shared/engine/retry.ts';
import { upstreamOutputs } from '../../../shared/engine/scheduling.ts';
import { decideTerminal, type TerminalStepView } from '../../../shared/engine/terminal.ts';
import type { FailurePolicy, StepStatus } from '../../../shared/plan/schema.ts';

const input = (entries: [string, StepStatus, FailurePolicy?][]) => ({
  expected: entries.map(([id]) => id),
  steps: new Map<string, TerminalStepView>(
    entries.map(([id, status]) => [
      id,
      { status, ...(status === 'failed' ? { error: { code: 'E_X', message: 'broke' } } : {}) },
    ]),
  ),
  policies: new Map(entries.flatMap(([id, , policy]) => (policy === undefined ? [] : [[id, policy] as const]))),
});

describe('decideTerminal with onFailure policies', () => {
  it('completes a run whose only failures were accepted by continue, listing them in the evidence', () => {
    const decision = decideTerminal(
      input([
        ['probe', 'failed', 'continue'],
        ['report', 'succeeded'],
      ]),
    );
    expect(decision).toMatchObject({
      state: 'complete',
      reason: 'completed',
      evidence: { continued: ['probe'], rootCauses: [], errors: { probe: { code: 'E_X' } } },
    });
  });

  it('fails on a failure under the default policy even when another failure was accepted', () => {
    const decision = decideTerminal(
      input([
        ['probe', 'failed', 'continue'],
        ['real', 'failed'],
        ['report', 'succeeded'],
      ]),
    );
    expect(decision).toMatchObject({ state: 'failed', reason: 'step_failed', evidence: { rootCauses: ['real'] } });
  });

  it('never completes on accepted failures alone', () => {
    expect(decideTerminal(input([['probe', 'failed', 'continue']]))).toMatchObject({ state: 'failed' });
  });

  it('fails the run at once on a fail-run failure while other work is still open', () => {
    const open = input([
      ['guard', 'failed', 'fail-run'],
      ['slow', 'running'],
    ]);
    expect(decideTerminal(open)).toMatchObject({
      state: 'failed',
      reason: 'step_failed',
      evidence: { open: ['slow'] },
    });
    const defaultPolicy = input([
      ['guard', 'failed'],
      ['slow', 'running'],
    ]);
    expect(decideTerminal(defaultPolicy)).toEqual({ state: 'continue' });
  });
});

describe('retryPolicy with onFailure', () => {
  const backoff = { baseSeconds: 1, capSeconds: 8 };
  it('does not retry a step whose failure goes to the replanner', () => {
    expect(retryPolicy({ maxRetries: 5, onFailure: 'replan' }, backoff).maxRetries).toBe(0);
    expect(retryPolicy({ maxRetries: 5, onFailure: 'continue' }, backoff).maxRetries).toBe(5);
  });
});

describe('upstreamOutputs', () => {
  it('binds an accepted failure to null', () => {
    const steps = new Map([
      ['a', { status: 'failed' as const, output: undefined }],
      ['b', { status: 'succeeded' as const, output: { v: 1 } }],
    ]);
    expect(upstreamOutputs(['a', 'b'], steps)).toEqual({ a: null, b: { v: 1 } });
  });
});
