/**
 * Which call gets which fault: the rules of a spec and a seed. Every call at a point draws once per rule of that
 * point from the point's own seeded stream (spec order; the first rule whose draw is under its probability fires),
 * so the same seed and spec make the same decisions in the same call order at each point. What a fault then does
 * (which way a timeout goes, how long a delay lasts) draws from a second stream of the point, so those choices never
 * shift the decisions. Counts what fired, for reports and tests.
 */
import { seededStreams } from './prng.ts';
import type { FaultName, FaultPoint, FaultRule } from './spec.ts';

export interface FaultInjector {
  readonly seed: number;
  readonly rules: readonly FaultRule[];
  /** Whether the spec names the point at all (wrappers are installed only for the points it names). */
  covers(point: FaultPoint): boolean;
  /** The fault for one call at `point`, or undefined: the call goes through untouched. */
  draw<P extends FaultPoint>(point: P): (FaultRule & { readonly fault: FaultName<P> }) | undefined;
  /** A number in [0, 1) for what a fault that fired does (its own stream, apart from the decisions). */
  detail(point: FaultPoint): number;
  /** How often each `point:fault` fired so far. */
  injected(): Readonly<Record<string, number>>;
  /** How many calls each point drew for so far (what a fault's count is out of). */
  calls(): Readonly<Record<string, number>>;
  /**
   * Stops (true) or resumes (false) injecting: while paused every call goes through untouched and draws nothing, so
   * the decisions after a pause are those the same calls would have met without it. The chaos suite pauses once the
   * stack has gone quiet, to read back what the runs left.
   */
  pause(paused: boolean): void;
}

export interface FaultInjectorOptions {
  /** Told of every fault that fires (the `npm start` log, tests). */
  readonly onFault?: (rule: FaultRule) => void;
}

export function createFaultInjector(
  rules: readonly FaultRule[],
  seed: number,
  options: FaultInjectorOptions = {},
): FaultInjector {
  const streams = seededStreams(seed);
  const byPoint = new Map<FaultPoint, FaultRule[]>();
  for (const rule of rules) byPoint.set(rule.point, [...(byPoint.get(rule.point) ?? []), rule]);
  const counts: Record<string, number> = {};
  const calls: Record<string, number> = {};
  let paused = false;
  return {
    seed,
    rules,
    covers: (point) => byPoint.has(point),
    draw<P extends FaultPoint>(point: P) {
      const candidates = byPoint.get(point);
      if (!candidates || paused) return undefined;
      const next = streams.stream(point);
      calls[point] = (calls[point] ?? 0) + 1;
      let fired: FaultRule | undefined;
      // Every rule draws on every call, whether an earlier one fired or not: a call costs the stream the same.
      for (const rule of candidates) {
        const hit = next() < rule.probability;
        if (hit && fired === undefined) fired = rule;
      }
      if (fired) {
        const key = `${fired.point}:${fired.fault}`;
        counts[key] = (counts[key] ?? 0) + 1;
        options.onFault?.(fired);
      }
      return fired as (FaultRule & { readonly fault: FaultName<P> }) | undefined;
    },
    detail: (point) => streams.stream(`${point}/detail`)(),
    injected: () => ({ ...counts }),
    calls: () => ({ ...calls }),
    pause: (value) => {
      paused = value;
    },
  };
}
