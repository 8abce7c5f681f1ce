/**
 * The isolated evaluator: each of the hostile expressions of issue 10 comes back as a limit outcome, while the
 * engine's own event loop keeps turning (a timer standing in for /health) and a trivial evaluation sent at the same
 * time is answered first by the other worker. Limits here are the defaults but for a shorter timeout, so the file
 * stays quick; the behaviour is the same at 1 s.
 */
import { type ForkOptions, fork } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createWorkerEvaluator,
  type WorkerEvaluator,
} from '../../../../shared/adapters/expressions/worker-evaluator.ts';
import { defaultExpressionLimits, type EvaluationOutcome } from '../../../../shared/plan/expression-limits.ts';

const limits = { ...defaultExpressionLimits(), timeoutMs: 300, memoryMb: 64 };
const bindings = { objective: 'goal', outputs: { a: { text: `${'a'.repeat(40)}!`, n: 1 } } };

let evaluator: WorkerEvaluator;

beforeEach(async () => {
  evaluator = createWorkerEvaluator({ limits, workers: 2, graceMs: 200 });
  // Both workers warm, as a running engine's are.
  await evaluator.warm();
}, 60_000);

afterEach(async () => {
  await evaluator.close();
});

/** Runs a hostile expression beside a trivial one and a main-thread timer; says what finished in which order. */
async function race(hostile: string) {
  const order: string[] = [];
  let ticks = 0;
  const ticker = setInterval(() => {
    ticks += 1;
  }, 5);
  const hostileDone = evaluator.evaluate({ sources: [hostile], bindings }).then((outcomes) => {
    order.push('hostile');
    return { outcomes, ticks };
  });
  const trivialDone = evaluator.evaluate({ sources: ['{% $outputs.a.n + 1 %}'], bindings }).then((outcomes) => {
    order.push('trivial');
    return outcomes;
  });
  const [hostileResult, trivial] = await Promise.all([hostileDone, trivialDone]);
  clearInterval(ticker);
  return { order, hostile: hostileResult.outcomes[0] as EvaluationOutcome, ticks: hostileResult.ticks, trivial };
}

describe('createWorkerEvaluator', () => {
  it('evaluates expressions in order, one outcome each, with ordinary errors as no limit', async () => {
    const outcomes = await evaluator.evaluate({ sources: ['{% $outputs.a.n %}', '1 +', '$objective'], bindings });
    expect(outcomes).toEqual([
      { ok: true, value: 1 },
      expect.objectContaining({ ok: false, limit: false }),
      { ok: true, value: 'goal' },
    ]);
  });

  it.each([
    ['an endless tail recursion', '{% ($f := function($n){ $f($n+1) }; $f(0)) %}'],
    ['a catastrophic regular expression', '{% $match($outputs.a.text, /(a+)+$/) %}'],
  ])('stops %s while the event loop and another evaluation go on', async (_, hostile) => {
    const { order, hostile: outcome, ticks, trivial } = await race(hostile);
    expect(outcome).toMatchObject({ ok: false, limit: true });
    expect(trivial).toEqual([{ ok: true, value: 2 }]);
    expect(order).toEqual(['trivial', 'hostile']);
    expect(ticks).toBeGreaterThan(0);
  });

  it.each([
    ['a non-tail recursion', '{% ($f := function($n){ 1 + $f($n+1) }; $f(0)) %}'],
    ['a 100 MB $pad', '{% $pad("", 100000000, "x") %}'],
    ['a heap filled in one allocation', '{% $count([1..10].$pad("", 9000000, "x")) %}'],
    ['a heap filled step by step', '{% $count([1..900000].{"a": $}) %}'],
  ])('fails %s as a limit and keeps answering', async (_, hostile) => {
    const { hostile: outcome, trivial } = await race(hostile);
    expect(outcome).toMatchObject({ ok: false, limit: true });
    expect(trivial).toEqual([{ ok: true, value: 2 }]);
    // The pool is still there for the next request (a killed worker is replaced).
    expect(await evaluator.evaluate({ sources: ['$objective'], bindings })).toEqual([{ ok: true, value: 'goal' }]);
  });

  it('answers an empty request without a worker, and starts its workers again after close', async () => {
    expect(await evaluator.evaluate({ sources: [], bindings })).toEqual([]);
    await evaluator.close();
    const again = evaluator.evaluate({ sources: ['1'], bindings });
    expect(await again).toEqual([{ ok: true, value: 1 }]);
  });

  it('forks each worker only once the one before it is ready, so no turn of the loop starts two', async () => {
    // For each fork: how many of the workers forked before it had said they were ready.
    const readyAtFork: number[] = [];
    let ready = 0;
    const watched = (file: string, args: readonly string[], options: ForkOptions) => {
      readyAtFork.push(ready);
      const child = fork(file, args, options);
      child.on('message', (message: { ready?: boolean }) => {
        if (message.ready) ready += 1;
      });
      return child;
    };
    const pool = createWorkerEvaluator({ limits, workers: 3, fork: watched });
    try {
      await pool.warm();
      expect(readyAtFork).toEqual([0, 1, 2]);
      expect(await pool.evaluate({ sources: ['{% $outputs.a.n + 1 %}'], bindings })).toEqual([{ ok: true, value: 2 }]);
    } finally {
      await pool.close();
    }
  });
});
