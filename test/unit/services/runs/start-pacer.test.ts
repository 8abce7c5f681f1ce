import { describe, expect, it } from 'vitest';
import { createStartPacer } from '../../../../shared/services/runs/start-pacer.ts';

/** A pacer on a clock the test moves: `sleep` moves it, so a wait for a turn costs no real time. */
function pacerAt(options: { ratePerSecond: number; burst: number; maxWaitMs: number }) {
  let now = 0;
  const slept: number[] = [];
  const pacer = createStartPacer({
    ...options,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
    },
  });
  return {
    pacer,
    slept,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('createStartPacer', () => {
  it('lets a burst start at once, then makes each next start wait its turn at the rate', async () => {
    const { pacer, slept } = pacerAt({ ratePerSecond: 10, burst: 3, maxWaitMs: 1_000 });
    for (let i = 0; i < 3; i++) expect(await pacer.take()).toBe(true);
    expect(slept).toEqual([]);
    expect(await pacer.take()).toBe(true);
    expect(await pacer.take()).toBe(true);
    expect(slept.map(Math.round)).toEqual([100, 200]);
  });

  it('hands a start back at once when its turn is further off than it may wait', async () => {
    const { pacer } = pacerAt({ ratePerSecond: 10, burst: 2, maxWaitMs: 250 });
    const taken = [];
    for (let i = 0; i < 10; i++) taken.push(await pacer.take());
    // Two of the burst, then turns at 100 and 200 ms; the 300 ms one is too far.
    expect(taken).toEqual([true, true, true, true, false, false, false, false, false, false]);
  });

  it('refills at its rate, up to the burst, and says how long room for more starts takes', async () => {
    const { pacer, advance } = pacerAt({ ratePerSecond: 10, burst: 5, maxWaitMs: 0 });
    for (let i = 0; i < 5; i++) await pacer.take();
    expect(await pacer.take()).toBe(false);
    expect(pacer.secondsFor(20)).toBeCloseTo(2);
    advance(60_000);
    expect(pacer.secondsFor(5)).toBe(0);
    expect(pacer.secondsFor(25)).toBeCloseTo(2);
  });
});
