import { describe, expect, it } from 'vitest';
import { faultsOf } from '../../../infra/local/faults/config.ts';
import { createFaultInjector } from '../../../infra/local/faults/injector.ts';
import { mulberry32 } from '../../../infra/local/faults/prng.ts';
import {
  BadFaultsError,
  FAULT_POINTS,
  formatFaultSpec,
  parseFaultSeed,
  parseFaultSpec,
} from '../../../infra/local/faults/spec.ts';

/** The BadFaultsError a spec is refused with (fails the test when it is accepted). */
function refusal(spec: string): BadFaultsError {
  try {
    parseFaultSpec(spec);
  } catch (error) {
    expect(error).toBeInstanceOf(BadFaultsError);
    return error as BadFaultsError;
  }
  throw new Error(`"${spec}" was accepted`);
}

describe('parseFaultSpec', () => {
  it('reads a comma-separated list of point:fault@probability in order', () => {
    expect(parseFaultSpec('store.write:throttle@0.03, bus.deliver:drop-once@0.05')).toEqual([
      { point: 'store.write', fault: 'throttle', probability: 0.03 },
      { point: 'bus.deliver', fault: 'drop-once', probability: 0.05, durationMs: 500 },
    ]);
  });

  it('takes percentages, 0 and 1, and a duration for the faults that have one', () => {
    expect(parseFaultSpec('lambda.invoke:crash-after@5%,sfn.start:duplicate@1,index.read:lag=250@.5')).toEqual([
      { point: 'lambda.invoke', fault: 'crash-after', probability: 0.05 },
      { point: 'sfn.start', fault: 'duplicate', probability: 1 },
      { point: 'index.read', fault: 'lag', probability: 0.5, durationMs: 250 },
    ]);
    expect(parseFaultSpec('capability.call:error@0')).toEqual([
      { point: 'capability.call', fault: 'error', probability: 0 },
    ]);
  });

  it('accepts every fault of every point, and an empty spec as no faults', () => {
    const all = Object.entries(FAULT_POINTS).flatMap(([point, faults]) => faults.map((f) => `${point}:${f}@0.02`));
    expect(parseFaultSpec(all.join(','))).toHaveLength(all.length);
    expect(parseFaultSpec('')).toEqual([]);
    expect(parseFaultSpec('  ')).toEqual([]);
  });

  it('refuses a bad part with E_BAD_FAULTS naming it', () => {
    const cases: [spec: string, part: string, says: RegExp][] = [
      ['store.write:throttle', 'store.write:throttle', /point:fault@probability/],
      ['store.writes:throttle@0.1', 'store.writes:throttle@0.1', /unknown point "store.writes"/],
      ['store.write:drop-once@0.1', 'store.write:drop-once@0.1', /store.write has no fault "drop-once"/],
      ['store.write:throttle@1.5', 'store.write:throttle@1.5', /outside 0..1/],
      ['store.write:throttle@abc', 'store.write:throttle@abc', /not a number/],
      ['store.write:throttle@-0.1', 'store.write:throttle@-0.1', /not a number/],
      ['store.write:throttle=50@0.1', 'store.write:throttle=50@0.1', /takes no duration/],
      ['store.write:throttle@0.1,store.write:throttle@0.2', 'store.write:throttle@0.2', /given twice/],
      ['store.write:throttle@0.1,,bus.deliver:delay@1', '', /empty entry/],
    ];
    for (const [spec, part, says] of cases) {
      const error = refusal(spec);
      expect(error.name).toBe('E_BAD_FAULTS');
      expect(error.context.part).toBe(part);
      expect(error.message).toMatch(says);
      expect(error.retryable).toBe(false);
    }
  });

  it('formats rules back into a spec that parses to the same rules', () => {
    const rules = parseFaultSpec('index.read:lag=250@0.5,bus.deliver:delay@0.1,store.read:timeout@2%');
    expect(parseFaultSpec(formatFaultSpec(rules))).toEqual(rules);
  });
});

describe('parseFaultSeed', () => {
  it('takes an unsigned 32-bit integer and refuses anything else naming its source', () => {
    expect(parseFaultSeed('42')).toBe(42);
    expect(parseFaultSeed(4_294_967_295)).toBe(4_294_967_295);
    for (const bad of ['-1', '1.5', 'x', '4294967296', '']) {
      expect(() => parseFaultSeed(bad, '--faults-seed')).toThrow(/--faults-seed/);
    }
  });
});

describe('faultsOf', () => {
  it('prefers the options over the environment, and gives nothing without a spec', () => {
    const env = { CAIRN_FAULTS: 'store.read:throttle@0.5', CAIRN_FAULTS_SEED: '7' };
    expect(faultsOf({}, {})).toBeUndefined();
    const fromEnv = faultsOf({}, env);
    expect(fromEnv?.seed).toBe(7);
    expect(fromEnv?.rules.map((r) => r.point)).toEqual(['store.read']);
    const fromOptions = faultsOf({ faults: 'sfn.start:throttle@1', faultsSeed: 9 }, env);
    expect(fromOptions?.seed).toBe(9);
    expect(fromOptions?.rules.map((r) => r.point)).toEqual(['sfn.start']);
    expect(faultsOf({ faults: '' }, env)).toBeUndefined();
  });

  it('refuses a bad spec or seed from the environment with E_BAD_FAULTS', () => {
    expect(() => faultsOf({}, { CAIRN_FAULTS: 'nope' })).toThrow(BadFaultsError);
    expect(() => faultsOf({}, { CAIRN_FAULTS: 'sfn.start:throttle@1', CAIRN_FAULTS_SEED: 'x' })).toThrow(
      /CAIRN_FAULTS_SEED/,
    );
  });
});

describe('createFaultInjector', () => {
  const decisions = (spec: string, seed: number, calls: number) => {
    const faults = createFaultInjector(parseFaultSpec(spec), seed);
    return Array.from({ length: calls }, (_, i) => faults.draw(i % 2 === 0 ? 'store.write' : 'bus.deliver')?.fault);
  };

  it('makes the same decisions for the same seed and spec, in the same call order', () => {
    const spec = 'store.write:throttle@0.3,store.write:timeout@0.3,bus.deliver:duplicate@0.5';
    expect(decisions(spec, 1234, 200)).toEqual(decisions(spec, 1234, 200));
    expect(decisions(spec, 1234, 200)).not.toEqual(decisions(spec, 4321, 200));
  });

  it('keeps each point’s decisions whatever the other points draw in between', () => {
    const spec = 'store.write:throttle@0.3,bus.deliver:duplicate@0.5';
    const alone = createFaultInjector(parseFaultSpec(spec), 99);
    const mixed = createFaultInjector(parseFaultSpec(spec), 99);
    const writesAlone = Array.from({ length: 50 }, () => alone.draw('store.write')?.fault);
    const writesMixed = Array.from({ length: 50 }, () => {
      mixed.draw('bus.deliver');
      mixed.detail('store.write');
      return mixed.draw('store.write')?.fault;
    });
    expect(writesMixed).toEqual(writesAlone);
  });

  it('fires about as often as the probability says, and counts what fired', () => {
    const faults = createFaultInjector(parseFaultSpec('store.read:throttle@0.1,store.read:timeout@1'), 5);
    const fired = Array.from({ length: 2000 }, () => faults.draw('store.read')?.fault);
    const throttles = fired.filter((f) => f === 'throttle').length;
    expect(throttles).toBeGreaterThan(140);
    expect(throttles).toBeLessThan(260);
    // The first rule that hits wins; the second (certain) takes every other call.
    expect(fired.filter((f) => f === 'timeout').length).toBe(2000 - throttles);
    expect(faults.injected()).toEqual({ 'store.read:throttle': throttles, 'store.read:timeout': 2000 - throttles });
    // What the counts are out of: every call that drew, fired or not (a point the spec does not name draws nothing).
    expect(faults.draw('sfn.start')).toBeUndefined();
    expect(faults.calls()).toEqual({ 'store.read': 2000 });
    expect(faults.covers('sfn.start')).toBe(false);
  });

  it('injects nothing while paused, and resumes the decisions where it left them', () => {
    const spec = 'store.write:throttle@1';
    const paused = createFaultInjector(parseFaultSpec(spec), 3);
    const plain = createFaultInjector(parseFaultSpec('store.write:throttle@0.5'), 3);
    const halfPaused = createFaultInjector(parseFaultSpec('store.write:throttle@0.5'), 3);
    paused.pause(true);
    expect(Array.from({ length: 20 }, () => paused.draw('store.write'))).toEqual(Array(20).fill(undefined));
    expect(paused.injected()).toEqual({});
    expect(paused.calls()).toEqual({});
    paused.pause(false);
    expect(paused.draw('store.write')?.fault).toBe('throttle');
    const first = Array.from({ length: 10 }, () => plain.draw('store.write')?.fault);
    halfPaused.pause(true);
    for (let i = 0; i < 7; i++) halfPaused.draw('store.write');
    halfPaused.pause(false);
    expect(Array.from({ length: 10 }, () => halfPaused.draw('store.write')?.fault)).toEqual(first);
  });
});

describe('mulberry32', () => {
  it('is a repeatable stream of numbers in [0, 1)', () => {
    const a = mulberry32(1);
    const b = mulberry32(1);
    const values = Array.from({ length: 1000 }, () => a());
    expect(values).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(new Set(values).size).toBeGreaterThan(990);
  });
});
