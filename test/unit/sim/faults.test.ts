/** The simulation's fault spec: the embedded runtime's syntax over the simulation's points, drawn per seed. */
import { describe, expect, it } from 'vitest';
import { allFaults, Faults, parseSimFaults } from '../../../bench/sim/faults.ts';

describe('the simulation fault spec', () => {
  it('reads point:fault@p and point:fault=MS@p, and all@p for every fault', () => {
    expect(parseSimFaults('store.write:crash-after@3%, bus.deliver:drop-once=900@0.02')).toEqual([
      { point: 'store.write', fault: 'crash-after', probability: 0.03 },
      { point: 'bus.deliver', fault: 'drop-once', probability: 0.02, durationMs: 900 },
    ]);
    const all = parseSimFaults('all@0.05');
    expect(all).toEqual(allFaults(0.05));
    expect(all.map((r) => `${r.point}:${r.fault}`)).toContain('lambda.invoke:timeout');
    expect(parseSimFaults('')).toEqual([]);
  });

  it('refuses what it does not know, naming the part', () => {
    expect(() => parseSimFaults('store.write:melt@0.1')).toThrow(/store.write:melt@0.1/);
    expect(() => parseSimFaults('disk.write:throttle@0.1')).toThrow(/unknown point/);
    expect(() => parseSimFaults('store.write:throttle@2')).toThrow(/probability/);
  });

  it('draws the same faults for the same seed', () => {
    const draws = (seed: number) => {
      const faults = new Faults(parseSimFaults('store.write:throttle@0.3,store.write:crash-after@0.3'), seed);
      return Array.from({ length: 50 }, () => faults.draw('store.write')?.fault ?? '-');
    };
    expect(draws(4)).toEqual(draws(4));
    expect(draws(4)).not.toEqual(draws(5));
  });
});
