/**
 * The capability caller under a time limit (a step's or run's budget.maxSeconds): the call is abandoned at the
 * limit with the failure the limit names, the binding's signal is aborted, and an answer in time is kept.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CapabilityBinding, CapabilityCall } from '../../../shared/ports/capabilities.ts';
import type { Store } from '../../../shared/ports/store.ts';
import { type CallTimeLimit, createCapabilityCaller } from '../../../shared/services/step/capability-call.ts';
import { aCall } from '../../support/capability-call.ts';

const BUDGET_FAILURE = { code: 'E_BUDGET_EXHAUSTED', message: 'step budget exhausted', retryable: false };

function callerWith(binding: CapabilityBinding, store: Partial<Store> = {}) {
  return createCapabilityCaller({
    store: store as Store,
    registry: { binding: () => binding },
    clock: () => new Date(),
  });
}

/** A binding that answers after `ms`, and remembers the signal it was given. */
function slowBinding(ms: number): CapabilityBinding & { signals: (AbortSignal | undefined)[] } {
  const signals: (AbortSignal | undefined)[] = [];
  return {
    kind: 'builtin',
    signals,
    invoke: (call: CapabilityCall) => {
      signals.push(call.signal);
      return new Promise((resolve) => setTimeout(() => resolve({ output: { sleptMs: ms } }), ms));
    },
  };
}

const limit = (ms: number): CallTimeLimit => ({ remainingMs: () => ms, failure: () => BUDGET_FAILURE });

describe('capability caller time limit', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('abandons a call still running at the limit with the limit failure, and aborts its signal', async () => {
    const binding = slowBinding(3000);
    const pending = callerWith(binding)(aCall(), 'none', undefined, limit(1000));
    await vi.advanceTimersByTimeAsync(1000);
    const result = await pending;
    expect(result.refused).toBeUndefined();
    if (result.refused) return;
    expect(result.answer).toMatchObject({ ok: false, phase: 'answer', failure: BUDGET_FAILURE });
    expect(result.answer.evidence).toMatchObject({ abandoned: true, binding: 'builtin' });
    expect(binding.signals[0]?.aborted).toBe(true);
  });

  it('does not start a call whose limit is spent by the time it would start', async () => {
    const binding = slowBinding(10);
    const result = await callerWith(binding)(aCall(), 'none', undefined, limit(0));
    if (result.refused) throw new Error('refused');
    expect(result.answer).toMatchObject({ ok: false, failure: BUDGET_FAILURE });
    expect(binding.signals).toEqual([]);
  });

  it('keeps an answer that comes before the limit', async () => {
    const pending = callerWith(slowBinding(500))(aCall(), 'none', undefined, limit(1000));
    await vi.advanceTimersByTimeAsync(500);
    const result = await pending;
    if (result.refused) throw new Error('refused');
    expect(result.answer).toMatchObject({ ok: true, output: { sleptMs: 500 } });
  });

  it('records an abandoned side effect as answered, so a replay does not act again', async () => {
    const completed: unknown[] = [];
    const store: Partial<Store> = {
      beginIdempotent: async () => undefined,
      completeIdempotent: async (_key, answer) => {
        completed.push(answer);
      },
      abortIdempotent: async () => {
        throw new Error('an abandoned side effect must not release its record');
      },
    };
    const pending = callerWith(slowBinding(3000), store)(aCall(), 'mutating', async () => true, limit(1000));
    await vi.advanceTimersByTimeAsync(1000);
    await pending;
    expect(completed).toEqual([expect.objectContaining({ ok: false, failure: BUDGET_FAILURE })]);
  });
});

describe('capability caller time limit beyond a timer', () => {
  it("keeps waiting for a call under a limit longer than setTimeout can hold (a long run's budget)", async () => {
    const result = await callerWith(slowBinding(20))(aCall(), 'none', undefined, limit(2 ** 31));
    if (result.refused) throw new Error('refused');
    expect(result.answer).toMatchObject({ ok: true, output: { sleptMs: 20 } });
  });
});
