/**
 * The simulation catches a decider that lies. The cancel rule is swapped, through the module seam (vi.mock, the rule
 * itself untouched), for one that answers a cancel OK and does nothing: the checks hold the decider to its answer.
 */
import { describe, expect, it, vi } from 'vitest';
import { generateSimPlan } from '../../../bench/sim/plans.ts';
import { simulateSeed } from '../../../bench/sim/runner.ts';
import { Rng } from '../../../bench/sim/scheduler.ts';

vi.mock('../../../shared/engine/run/rules/cancel.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../shared/engine/run/rules/cancel.ts')>();
  return {
    ...original,
    cancelRun: (d: Parameters<typeof original.cancelRun>[0]) => {
      d.reply = { ok: true, value: { status: d.run.status } };
    },
  };
});

/** The first seed whose run gets a cancel from its client. */
function seedWithCancel(): number {
  for (let seed = 1; seed < 1_000; seed++)
    if (generateSimPlan(Rng.of(seed, 'plan:0')).actions.some((a) => a.kind === 'cancel' && a.atMs < 60_000))
      return seed;
  throw new Error('no seed cancels its run');
}

describe('the simulation, against a broken decider rule', () => {
  it('reports the cancel it answered OK and never made, with its seed', async () => {
    const seed = seedWithCancel();
    const result = await simulateSeed({ seed, runs: 1, faults: [] });
    const lies = result.violations.filter((v) => v.invariant === 'answer' && v.detail.startsWith('CancelRun'));
    expect(lies.length).toBeGreaterThan(0);
    expect(lies[0]).toMatchObject({ seed, runId: `sim-${seed}-0` });
  });
});
