import { describe, expect, it } from 'vitest';
import {
  createPartitionThroughput,
  readUnits,
  writeUnits,
} from '../../../../infra/local/quotas/partition-throughput.ts';

function fakeClock() {
  let time = 0;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

describe('writeUnits', () => {
  it('counts one unit per 1 KB begun, at least one', () => {
    expect(writeUnits(0)).toBe(1);
    expect(writeUnits(1)).toBe(1);
    expect(writeUnits(1024)).toBe(1);
    expect(writeUnits(1025)).toBe(2);
    expect(writeUnits(400 * 1024)).toBe(400);
  });
});

describe('readUnits', () => {
  it('counts one unit per 4 KB begun for a strongly consistent read, at least one', () => {
    expect(readUnits(0, true)).toBe(1);
    expect(readUnits(4096, true)).toBe(1);
    expect(readUnits(4097, true)).toBe(2);
    expect(readUnits(400 * 1024, true)).toBe(100);
  });

  it('halves them for an eventually consistent read', () => {
    expect(readUnits(0, false)).toBe(0.5);
    expect(readUnits(4097, false)).toBe(1);
  });
});

describe('createPartitionThroughput', () => {
  it('admits a key until its second of units is spent, then refuses it', () => {
    const clock = fakeClock();
    const partitions = createPartitionThroughput({
      readUnitsPerSecond: 3000,
      writeUnitsPerSecond: 1000,
      now: clock.now,
    });
    let admitted = 0;
    while (partitions.admits('write', 'RUN#a')) {
      partitions.charge('write', 'RUN#a', writeUnits(1024));
      admitted += 1;
    }
    expect(admitted).toBe(1000);
  });

  it('charges an item by its size: 4 KB items spend a key 4 times faster than 1 KB ones', () => {
    const clock = fakeClock();
    const partitions = createPartitionThroughput({
      readUnitsPerSecond: 3000,
      writeUnitsPerSecond: 1000,
      now: clock.now,
    });
    let admitted = 0;
    while (partitions.admits('write', 'k')) {
      partitions.charge('write', 'k', writeUnits(4096));
      admitted += 1;
    }
    expect(admitted).toBe(250);
  });

  it('keeps keys apart, and reads apart from writes', () => {
    const clock = fakeClock();
    const partitions = createPartitionThroughput({ readUnitsPerSecond: 3, writeUnitsPerSecond: 1, now: clock.now });
    partitions.charge('write', 'hot', 5);
    expect(partitions.admits('write', 'hot')).toBe(false);
    expect(partitions.admits('write', 'cold')).toBe(true);
    expect(partitions.admits('read', 'hot')).toBe(true);
  });

  it('lets a key in debt in again once the refill has paid the debt back', () => {
    const clock = fakeClock();
    const partitions = createPartitionThroughput({
      readUnitsPerSecond: 3000,
      writeUnitsPerSecond: 1000,
      now: clock.now,
    });
    partitions.charge('write', 'k', 1400); // a full second's 1,000 and 400 more
    expect(partitions.balance('write', 'k')).toBe(-400);
    clock.advance(400);
    expect(partitions.admits('write', 'k')).toBe(false);
    clock.advance(1);
    expect(partitions.admits('write', 'k')).toBe(true);
  });

  it('forgets keys that are full again once it tracks many', () => {
    const clock = fakeClock();
    const partitions = createPartitionThroughput({ readUnitsPerSecond: 3, writeUnitsPerSecond: 1, now: clock.now });
    for (let i = 0; i < 5000; i++) partitions.charge('read', `k${i}`, 1);
    clock.advance(2000);
    for (let i = 0; i < 1024; i++) partitions.charge('read', `late${i}`, 1);
    expect(partitions.tracked()).toBeLessThan(5000);
  });
});
