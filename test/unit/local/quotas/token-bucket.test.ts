import { describe, expect, it } from 'vitest';
import { createTokenBucket } from '../../../../infra/local/quotas/token-bucket.ts';

/** A clock the test moves by hand (milliseconds). */
function fakeClock() {
  let time = 0;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

describe('createTokenBucket', () => {
  it('lets a burst of the bucket size through at once and refuses the next call', () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ capacity: 1300, refillPerSecond: 300, now: clock.now });
    let taken = 0;
    while (bucket.tryTake()) taken += 1;
    expect(taken).toBe(1300);
    expect(bucket.tryTake()).toBe(false);
  });

  it('refills at the rate: an empty bucket takes rate × seconds more calls', () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ capacity: 1300, refillPerSecond: 300, now: clock.now });
    while (bucket.tryTake());
    clock.advance(500);
    let taken = 0;
    while (bucket.tryTake()) taken += 1;
    expect(taken).toBe(150);
  });

  it('never holds more than its size, however long it waits', () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ capacity: 10, refillPerSecond: 5, now: clock.now });
    bucket.tryTake(4);
    clock.advance(60_000);
    expect(bucket.tokens()).toBe(10);
  });

  it('takes nothing when a call asks for more than the bucket has', () => {
    const clock = fakeClock();
    const bucket = createTokenBucket({ capacity: 3, refillPerSecond: 1, now: clock.now });
    expect(bucket.tryTake(4)).toBe(false);
    expect(bucket.tokens()).toBe(3);
  });

  it('ignores a clock that goes backwards instead of adding or removing tokens', () => {
    let time = 1000;
    const bucket = createTokenBucket({ capacity: 2, refillPerSecond: 1, now: () => time });
    bucket.tryTake(2);
    time = 0;
    expect(bucket.tokens()).toBe(0);
    time = 1500;
    expect(bucket.tokens()).toBeCloseTo(0.5);
  });

  it('refuses a bucket without size or refill', () => {
    expect(() => createTokenBucket({ capacity: 0, refillPerSecond: 1 })).toThrow(RangeError);
    expect(() => createTokenBucket({ capacity: 1, refillPerSecond: 0 })).toThrow(RangeError);
  });
});
