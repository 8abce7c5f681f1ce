/** The simulation's clock: tasks by virtual time, ties by the seed, the same order for the same seed. */
import { describe, expect, it } from 'vitest';
import { Rng, Scheduler } from '../../../bench/sim/scheduler.ts';

/** Ten actors that each sleep a few drawn times and note when they wake: the order they interleave in. */
async function interleaving(seed: number): Promise<string[]> {
  const sched = new Scheduler(Rng.of(seed, 'ties'), 0);
  const order: string[] = [];
  const actor = async (name: string) => {
    const rng = Rng.of(7, name);
    for (let i = 0; i < 5; i++) {
      await sched.sleep(rng.int(0, 3));
      order.push(`${name}@${sched.now}`);
    }
  };
  for (let i = 0; i < 10; i++) sched.after(0, () => void actor(`a${i}`));
  expect(await sched.run(1_000, 10_000)).toBe('quiet');
  return order;
}

describe('the simulation scheduler', () => {
  it('runs tasks by virtual time, and ties in the same order for the same seed', async () => {
    const first = await interleaving(1);
    expect(first).toHaveLength(50);
    const times = first.map((entry) => Number(entry.split('@')[1]));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(await interleaving(1)).toEqual(first);
    expect(await interleaving(2)).not.toEqual(first);
  });

  it('skips a cancelled task, stops at its horizon, and never reads the wall clock', async () => {
    const sched = new Scheduler(Rng.of(1, 'ties'), 1_000);
    const ran: number[] = [];
    sched.after(5, () => ran.push(sched.now)).cancel();
    sched.after(10, () => ran.push(sched.now));
    sched.after(5_000, () => ran.push(sched.now));
    expect(await sched.run(2_000, 100)).toBe('horizon');
    expect(ran).toEqual([1_010]);
    expect(sched.clock().toISOString()).toBe(new Date(1_010).toISOString());
    expect(await sched.run(10_000, 100)).toBe('quiet');
    expect(ran).toEqual([1_010, 6_000]);
  });
});
