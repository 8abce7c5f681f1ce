import { describe, expect, it } from 'vitest';
import { createLoopTurns } from '../../../infra/local/loop-turns.ts';

/** A hand-driven clock and loop: `poll()` is the loop's next turn, running what waited for it. */
function handLoop() {
  let time = 0;
  const turns: (() => void)[] = [];
  const loop = createLoopTurns({ sliceMs: 20, now: () => time, later: (release) => turns.push(release) });
  return {
    loop,
    spend: (ms: number) => {
      time += ms;
    },
    /** One turn of the loop, then the promise jobs it let go. */
    poll: async () => {
      turns.shift()?.();
      await Promise.resolve();
      await Promise.resolve();
    },
    pending: () => turns.length,
  };
}

describe('createLoopTurns', () => {
  it('lets work go on at once while the slice has time left', () => {
    const { loop, spend } = handLoop();
    spend(19);

    expect(loop.turn()).toBeUndefined();
    expect(loop.waits).toBe(0);
  });

  it('makes work wait for the loop to poll once the slice is spent, then starts a new slice', async () => {
    const { loop, spend, poll } = handLoop();
    spend(20);
    let went = false;
    void loop.turn()?.then(() => {
      went = true;
    });
    await Promise.resolve();

    expect(went).toBe(false);
    await poll();
    expect(went).toBe(true);
    expect(loop.waits).toBe(1);
    expect(loop.turn()).toBeUndefined();
  });

  it('lets waiting work go one piece per turn of the loop, in arrival order', async () => {
    const { loop, spend, poll, pending } = handLoop();
    spend(25);
    const order: number[] = [];
    for (const n of [1, 2, 3]) void loop.turn()?.then(() => order.push(n));

    await poll();
    expect(order).toEqual([1]);
    // Work that arrives while others wait queues behind them, even in a fresh slice.
    void loop.turn()?.then(() => order.push(4));
    await poll();
    await poll();
    await poll();

    expect(order).toEqual([1, 2, 3, 4]);
    expect(pending()).toBe(0);
  });
});
