/**
 * The embedded server's plan-check pool: a body checked in a worker thread gets the very answer the API's inline
 * check gives (the same value, or the same refusal), and a pool with no room refuses at once with a coded 503.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createLoopTurns } from '../../../infra/local/loop-turns.ts';
import { createPlanCheckPool } from '../../../infra/local/plan-check-pool.ts';
import {
  inlinePlanRequestChecks,
  type PlanRequestJob,
  type PlanRequestOutcome,
} from '../../../shared/api/plan-requests.ts';
import { catalog, echoStep, planOf } from '../api/harness.ts';

const limits = { maxSteps: 64, maxDepth: 32 };
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
const json = (value: unknown): Uint8Array => bytes(JSON.stringify(value));

const chain = (n: number) =>
  planOf(
    Array.from({ length: n }, (_, i) =>
      i === 0
        ? echoStep('s0')
        : echoStep(`s${i}`, { dependsOn: [`s${i - 1}`], input: { value: `{% $steps.s${i - 1}.output.value %}` } }),
    ),
  );

/** Bodies of every kind the two routes meet: valid, invalid, malformed, hostile. */
const JOBS: Record<string, () => PlanRequestJob> = {
  'a valid plan to validate': () => ({ kind: 'validate', bytes: json({ plan: chain(3) }) }),
  'an invalid plan to validate': () => ({
    kind: 'validate',
    bytes: json({ plan: planOf([echoStep('a', { dependsOn: ['nope'] }), echoStep('a')]) }),
  }),
  'too many steps': () => ({ kind: 'validate', bytes: json({ plan: chain(65) }) }),
  'a bad expression': () => ({
    kind: 'validate',
    bytes: json({ plan: planOf([echoStep('a', { input: { value: '{% $match("a", /(a+)+$/) %}' } })]) }),
  }),
  'not JSON': () => ({ kind: 'validate', bytes: bytes('{"plan": [1, 2') }),
  'not UTF-8': () => ({ kind: 'validate', bytes: new Uint8Array([0x7b, 0xff, 0x7d]) }),
  'a __proto__ key': () => ({ kind: 'validate', bytes: bytes('{"plan": {"__proto__": {}}}') }),
  'nested 100,000 deep': () => ({
    kind: 'validate',
    bytes: bytes(`{"plan":${'['.repeat(100_000)}${']'.repeat(100_000)}}`),
  }),
  'no body': () => ({ kind: 'submit', bytes: new Uint8Array(0), hash: false }),
  'a valid plan to run, hashed': () => ({ kind: 'submit', bytes: json({ plan: chain(20) }), hash: true }),
  'an invalid plan to run': () => ({ kind: 'submit', bytes: json({ plan: { steps: 'no' } }), hash: false }),
  'an objective to run': () => ({
    kind: 'submit',
    bytes: json({ objective: 'say hi', directTarget: 'tool:echo' }),
    hash: true,
  }),
  'an unknown field': () => ({ kind: 'submit', bytes: json({ objective: 'x', extra: 1 }), hash: false }),
};

describe('createPlanCheckPool', () => {
  const pool = createPlanCheckPool({ catalog, limits, workers: 2, inlineBelowBytes: 0 });
  const inline = inlinePlanRequestChecks({ catalog, limits });
  afterAll(() => pool.close());

  it.each(Object.entries(JOBS))('answers %s in a worker exactly as the inline check does', async (_, make) => {
    const [inWorker, inPlace] = await Promise.all([pool.run(make()), inline.run(make())]);
    expect(inWorker).toEqual(inPlace);
  });

  it('runs the jobs in a worker thread and gives the caller its bytes back untouched', async () => {
    const job = JOBS['a valid plan to validate']?.() as PlanRequestJob;
    const sent = job.bytes.slice();
    const outcome = await pool.run(job);
    expect(outcome).toEqual({ ok: true, value: { valid: true } });
    // The pool transfers a copy of a view it does not own, never the caller's buffer.
    expect(job.bytes.byteLength === 0 || Buffer.from(job.bytes).equals(Buffer.from(sent))).toBe(true);
  });

  it('refuses a job with 503 E_OVERLOADED and Retry-After when every worker is busy and the queue is full', async () => {
    const small = createPlanCheckPool({ catalog, limits, workers: 1, queue: 0, inlineBelowBytes: 0 });
    try {
      const make = JOBS['a valid plan to run, hashed'] as () => PlanRequestJob;
      const [first, second] = await Promise.all([small.run(make()), small.run(make())]);
      expect(first.ok).toBe(true);
      expect(second).toEqual({
        ok: false,
        refused: expect.objectContaining({ status: 503, code: 'E_OVERLOADED', retryAfterSeconds: 1 }),
      } satisfies PlanRequestOutcome | object);
      // Once the worker is free, the same job is taken again.
      expect((await small.run(make())).ok).toBe(true);
    } finally {
      await small.close();
    }
  });

  it('checks a body smaller than inlineBelowBytes in place, without a worker', async () => {
    const busy = createPlanCheckPool({ catalog, limits, workers: 1, queue: 0, inlineBelowBytes: 1024 * 1024 });
    try {
      const make = JOBS['a valid plan to validate'] as () => PlanRequestJob;
      const outcomes = await Promise.all([busy.run(make()), busy.run(make()), busy.run(make())]);
      expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
      expect(busy.load()).toEqual({ running: 0, waiting: 0 });
    } finally {
      await busy.close();
    }
  });

  it('waits for a turn of the loop before an in-place check once the slice is spent', async () => {
    let at = 0;
    const released: (() => void)[] = [];
    const turns = createLoopTurns({ sliceMs: 20, now: () => at, later: (release) => released.push(release) });
    const pool = createPlanCheckPool({ catalog, limits, inlineBelowBytes: 1024 * 1024, turns });
    try {
      const make = JOBS['a valid plan to run, hashed'] as () => PlanRequestJob;
      at = 25;
      let answered = 0;
      const outcomes = [pool.run(make()), pool.run(make())].map(async (outcome) => {
        const settled = await outcome;
        answered++;
        return settled;
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(answered).toBe(0);
      // One waiter per turn: the first check runs, the second still waits for the loop to poll again.
      released.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
      expect(answered).toBe(1);
      released.shift()?.();
      const inline = await inlinePlanRequestChecks({ catalog, limits }).run(make());
      expect(await Promise.all(outcomes)).toEqual([inline, inline]);
      expect(turns.waits).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('lets the loop run other work between the checks of a burst of small bodies', async () => {
    // A slice of 0 ms: every check waits for a turn, as each would once a burst has spent the slice.
    const pool = createPlanCheckPool({
      catalog,
      limits,
      inlineBelowBytes: 1024 * 1024,
      turns: createLoopTurns({ sliceMs: 0 }),
    });
    try {
      const make = JOBS['a valid plan to run, hashed'] as () => PlanRequestJob;
      let answered = 0;
      const burst = Array.from({ length: 20 }, () => pool.run(make()).then(() => answered++));
      // What /health would be: work that asks the loop for a turn after the burst arrived.
      const answeredBeforeIt = await new Promise<number>((resolve) => setImmediate(() => resolve(answered)));
      await Promise.all(burst);
      expect(answeredBeforeIt).toBeLessThan(20);
      expect(answered).toBe(20);
    } finally {
      await pool.close();
    }
  });
});
