import { describe, expect, it } from 'vitest';
import { createConcurrencyGate } from '../../../../infra/local/quotas/concurrency-gate.ts';

describe('createConcurrencyGate', () => {
  it('gives at most `limit` places and refuses the next synchronous caller', () => {
    const gate = createConcurrencyGate(2);
    const first = gate.tryEnter();
    const second = gate.tryEnter();
    expect(first).toBeTypeOf('function');
    expect(second).toBeTypeOf('function');
    expect(gate.tryEnter()).toBeUndefined();
    expect(gate.inUse()).toBe(2);
  });

  it('gives a place back once it is left, and only once however often it is left', () => {
    const gate = createConcurrencyGate(1);
    const leave = gate.tryEnter();
    leave?.();
    leave?.();
    expect(gate.inUse()).toBe(0);
    expect(gate.tryEnter()).toBeTypeOf('function');
    expect(gate.tryEnter()).toBeUndefined();
  });

  it('makes an asynchronous caller wait for a place, and hands it over before a synchronous caller can take it', async () => {
    const gate = createConcurrencyGate(1);
    const leave = gate.tryEnter();
    let entered = false;
    const waiting = gate.enter().then((place) => {
      entered = true;
      return place;
    });
    await Promise.resolve();
    expect(entered).toBe(false);
    expect(gate.waiting()).toBe(1);
    leave?.();
    expect(gate.tryEnter()).toBeUndefined();
    const place = await waiting;
    expect(entered).toBe(true);
    place();
    expect(gate.inUse()).toBe(0);
  });

  it('serves waiters in the order they came', async () => {
    const gate = createConcurrencyGate(1);
    const leave = gate.tryEnter();
    const order: string[] = [];
    const a = gate.enter().then((place) => {
      order.push('a');
      place();
    });
    const b = gate.enter().then((place) => {
      order.push('b');
      place();
    });
    leave?.();
    await Promise.all([a, b]);
    expect(order).toEqual(['a', 'b']);
  });

  it('refuses a limit below one', () => {
    expect(() => createConcurrencyGate(0)).toThrow(RangeError);
    expect(() => createConcurrencyGate(1.5)).toThrow(RangeError);
  });
});
