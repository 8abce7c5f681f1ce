/**
 * The bounded, seeded chaos run CI keeps: a few small randomized runs on the embedded stack (cancels,
 * invalidations, approvals, a modest fault mix: injected once the stack reads CAIRN_FAULTS, fault-free before) with
 * every invariant checked from outside. A violation names its run; `npm run chaos -- --seed 20261201 --only i`
 * re-runs it.
 */
import { describe, expect, it } from 'vitest';
import { formatReport } from '../../bench/chaos/report.ts';
import { type ChaosOptions, runChaos } from '../../bench/chaos/runner.ts';

const OPTIONS: ChaosOptions = {
  runs: 8,
  seed: 20261201,
  faults: 'store.write:throttle@0.02,sfn.start:duplicate@0.02,bus.deliver:duplicate@0.03,capability.call:error@0.02',
  concurrency: 4,
  boundMs: 45_000,
  cancelRate: 0.25,
  invalidateRate: 0.4,
};

describe('the chaos suite, bounded and seeded', () => {
  it('ends every run and breaks no invariant under cancels, invalidations, approvals and faults', async () => {
    const result = await runChaos(OPTIONS);
    const report = formatReport(OPTIONS, result).join('\n');

    expect(result.errors, report).toEqual([]);
    expect(result.runs, report).toHaveLength(OPTIONS.runs);
    expect(result.runs.flatMap((r) => r.steps).length, report).toBeGreaterThan(OPTIONS.runs);
    expect(result.violations, report).toEqual([]);
  }, 180_000);
});
