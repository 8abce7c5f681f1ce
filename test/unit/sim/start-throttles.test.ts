/**
 * The simulation with Step Functions throttling many starts (and each shell pacing its own): a throttled start goes
 * back to the run's decider, which defers it by a timer and makes it again. No invariant is violated, every world
 * goes quiet (liveness: no step waits for a start that never comes), and the deferrals did happen.
 */
import { describe, expect, it } from 'vitest';
import { parseSimFaults } from '../../../bench/sim/faults.ts';
import { simulateSeed } from '../../../bench/sim/runner.ts';

describe('the simulation under start throttles', () => {
  it('defers and retries throttled starts through the decider, with nothing stuck and nothing violated', async () => {
    const faults = parseSimFaults('sfn.start:throttle@0.3');
    let deferred = 0;
    let retried = 0;
    for (const seed of [11, 12, 13, 14]) {
      const result = await simulateSeed({ seed, runs: 6, faults });
      expect(result.end, `seed ${seed}`).toBe('quiet');
      expect(result.violations, `seed ${seed}`).toEqual([]);
      // Each run ended or waits for a person: none is left running for a start that never came.
      for (const status of result.statuses) expect(status).toMatch(/ (complete|failed|cancelled|paused)\b/);
      deferred += result.tallies.get('event: StartsDeferred') ?? 0;
      retried += result.tallies.get('event: StartsRetried') ?? 0;
    }
    expect(deferred).toBeGreaterThan(0);
    expect(retried).toBeGreaterThan(0);
  });
});
