/**
 * The decider's part in admission, pure: a queued run starts only on AdmitRun (once), a cancelled queued run ends
 * and is never started, and a run's end frees its tenant's slot as an effect (a pause keeps it, a reopening of an
 * ended run takes one again).
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../../../shared/engine/run/decide.ts';
import type { Effect } from '../../../../shared/engine/run/effects.ts';
import type { RunState } from '../../../../shared/engine/run/state.ts';
import { DrivenRun, initialState, planOf } from '../../../support/decider.ts';

const AT = '2026-01-01T00:00:05.000Z';

function queuedState(tenant?: string): RunState {
  const state = initialState();
  return { ...state, run: { ...state.run, status: 'queued', ...(tenant === undefined ? {} : { tenant }) } };
}

const admissionEffects = (effects: readonly Effect[]) => effects.filter((e) => e.kind === 'admission');

describe('the decider: a queued run', () => {
  it('starts planning on AdmitRun: its run execution is started and RunAdmitted published', () => {
    const decided = decide(queuedState(), { kind: 'AdmitRun', at: AT });
    expect(decided.events.map((e) => e.type)).toEqual(['RunAdmitted']);
    expect(decided.state.run.status).toBe('planning');
    expect(decided.effects).toEqual([{ kind: 'startRun', name: expect.any(String), input: { runId: 'run-1' } }]);
    expect(decided.published.map((p) => p.detailType)).toEqual(['RunAdmitted']);
  });

  it('takes a repeated AdmitRun as nothing', () => {
    const admitted = decide(queuedState(), { kind: 'AdmitRun', at: AT }).state;
    const again = decide(admitted, { kind: 'AdmitRun', at: AT });
    expect(again.events).toEqual([]);
    expect(again.effects).toEqual([]);
  });

  it('ends cancelled on CancelRun, frees its place in its tenant queue, and never starts after that', () => {
    const cancelled = decide(queuedState('acme'), { kind: 'CancelRun', at: AT, compensate: false, by: 'ana' });
    expect(cancelled.state.run.status).toBe('cancelled');
    expect(admissionEffects(cancelled.effects)).toEqual([
      { kind: 'admission', action: 'release', tenant: 'acme', createdAt: '2026-01-01T00:00:00.000Z' },
    ]);
    const late = decide(cancelled.state, { kind: 'AdmitRun', at: AT });
    expect(late.events).toEqual([]);
    expect(late.effects).toEqual([]);
  });

  it('refuses an invalidation (409) while it waits', () => {
    const decided = decide(queuedState(), { kind: 'Invalidate', at: AT, roots: ['a'], reason: 'stale', key: 'k' });
    expect(decided.events).toEqual([]);
    expect(decided.reply).toMatchObject({ ok: false, status: 409 });
  });
});

describe("the decider: a run's end and its tenant's slot", () => {
  const plan = planOf([{ id: 'a' }]);

  it('releases the slot when the run completes (the default tenant when the run names none)', () => {
    const run = new DrivenRun();
    run.apply({ kind: 'StartRun', plan });
    const before = run.state;
    const step = run.step('a');
    const decided = decide(before, {
      kind: 'AttemptEnded',
      at: AT,
      stepId: 'a',
      generation: step.generation,
      execution: run.execution('a'),
      attempt: 1,
      outcome: { kind: 'succeeded', confidence: null },
      note: 'done',
    });
    expect(decided.state.run.status).toBe('complete');
    expect(admissionEffects(decided.effects)).toEqual([
      { kind: 'admission', action: 'release', tenant: 'default', createdAt: '2026-01-01T00:00:00.000Z' },
    ]);
  });

  it('keeps the slot of a paused run, and takes one again when an ended run reopens', () => {
    const paused = new DrivenRun();
    paused.apply({ kind: 'StartRun', plan: planOf([{ id: 'a', onFailure: 'pause' }]) });
    const pausing = decide(paused.state, {
      kind: 'AttemptEnded',
      at: AT,
      stepId: 'a',
      generation: 1,
      execution: paused.execution('a'),
      attempt: 1,
      outcome: { kind: 'failed', error: { code: 'E_X', message: 'no', retryable: false } },
      note: 'failed',
    });
    expect(pausing.state.run.status).toBe('paused');
    expect(admissionEffects(pausing.effects)).toEqual([]);

    const done = new DrivenRun();
    done.apply({ kind: 'StartRun', plan });
    done.succeed('a');
    expect(done.state.run.status).toBe('complete');
    const reopened = decide(done.state, { kind: 'Invalidate', at: AT, roots: ['a'], reason: 'stale', key: 'k' });
    expect(reopened.events.map((e) => e.type)).toContain('RunReopened');
    expect(admissionEffects(reopened.effects)).toEqual([
      { kind: 'admission', action: 'reenter', tenant: 'default', createdAt: '2026-01-01T00:00:00.000Z' },
    ]);
  });
});
