/**
 * The simulation catches a store that does not hold what the log says. The in-memory run log is swapped, through the
 * module seam (vi.mock), for one whose projection loses the run record's image now and then: the shells' copies
 * loaded from the store then no longer follow from the log, and the store's records at the end are not the log's.
 */
import { describe, expect, it, vi } from 'vitest';
import { simulateSeed } from '../../../bench/sim/runner.ts';

vi.mock('../../../shared/adapters/memory/run-log.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../../shared/adapters/memory/run-log.ts')>();
  return {
    ...original,
    createMemoryRunLog: (...args: Parameters<typeof original.createMemoryRunLog>) => {
      const log = original.createMemoryRunLog(...args);
      return {
        ...log,
        project: (batch: Parameters<typeof log.project>[0]) =>
          log.project(batch.version % 3 === 0 ? { ...batch, images: { ...batch.images, run: undefined } } : batch),
      };
    },
  };
});

describe('the simulation, against a broken projection', () => {
  it('reports the store that is not the log', async () => {
    const found = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5]) {
      const result = await simulateSeed({ seed, runs: 2, faults: [] });
      for (const v of result.violations) found.add(v.invariant);
    }
    expect([...found].some((name) => name === 'projection' || name === 'event-sourcing')).toBe(true);
  });
});
