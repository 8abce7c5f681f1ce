/**
 * The simulation's faults, in the embedded runtime's spec syntax (`point:fault@probability`, `point:fault=MS@p`,
 * infra/local/faults/spec.ts), over the points the simulation has: the run log and the store's writes and reads,
 * the mailbox's deliveries, and a step execution's Lambda answer. Each draw comes from the point's own seeded stream,
 * so the same seed and spec fault the same calls.
 *
 * - `store.write:throttle`: a commit or a projection fails and writes nothing; `store.write:crash-after`: it lands and
 *   its answer is lost; `store.write:timeout`: one or the other (seeded). The shell drops its copy of the run and
 *   the mailbox takes the batch again.
 * - `store.read:throttle`: a read of the shell's (loading the run) fails.
 * - `bus.deliver:duplicate|delay|drop-once`: a command reaches the run's mailbox twice, late (up to MS), or is lost
 *   and sent again MS later.
 * - `lambda.invoke:crash-after`: a step execution's word is sent twice (its Task's answer was lost and it ran again);
 *   a wait's Task is retried with a new token. `lambda.invoke:timeout`: a shell outlives the queue's visibility
 *   timeout, and the batch is received by the other shell while the first still handles it.
 * - `sfn.start:throttle`: an effect (an execution started or stopped, a token answered) is refused
 *   (`ThrottlingException`): a step execution's start goes back to the run's decider, which defers it
 *   (StartsThrottled); any other effect's batch is performed again by whoever loads the run next.
 */
import { BadFaultsError, DEFAULT_DURATION_MS } from '../../infra/local/faults/spec.ts';
import { Rng } from './scheduler.ts';

export const SIM_FAULT_POINTS = {
  'store.write': ['throttle', 'crash-after', 'timeout'],
  'store.read': ['throttle'],
  'bus.deliver': ['duplicate', 'delay', 'drop-once'],
  'lambda.invoke': ['crash-after', 'timeout'],
  'sfn.start': ['throttle'],
} as const satisfies Readonly<Record<string, readonly string[]>>;

export type SimFaultPoint = keyof typeof SIM_FAULT_POINTS;

export interface SimFaultRule {
  readonly point: SimFaultPoint;
  readonly fault: string;
  readonly probability: number;
  readonly durationMs?: number;
}

/** Every fault of every point at `probability`: what `--faults all@P` stands for. */
export const allFaults = (probability: number): SimFaultRule[] =>
  Object.entries(SIM_FAULT_POINTS).flatMap(([point, faults]) =>
    faults
      .filter((fault) => point !== 'store.write' || fault !== 'timeout')
      .map((fault) => {
        const durationMs = DEFAULT_DURATION_MS[`${point}:${fault}`];
        const rule = { point: point as SimFaultPoint, fault, probability };
        return durationMs === undefined ? rule : { ...rule, durationMs };
      }),
  );

const PART = /^([a-z]+\.[a-z]+):([a-z-]+)(?:=(\d+)(?:ms)?)?@(\S+)$/;

function probabilityOf(raw: string, part: string): number {
  const value = raw.endsWith('%') ? Number(raw.slice(0, -1)) / 100 : Number(raw);
  if (!/^(?:\d+(?:\.\d*)?|\.\d+)%?$/.test(raw) || !(value >= 0 && value <= 1))
    throw new BadFaultsError(part, `probability "${raw}" is not a number in 0..1 or a %`);
  return value;
}

const isPoint = (point: string): point is SimFaultPoint => Object.hasOwn(SIM_FAULT_POINTS, point);

/** The rules of a spec (`all@P` for every fault at P). Throws BadFaultsError naming the bad part. */
export function parseSimFaults(spec: string): SimFaultRule[] {
  const rules: SimFaultRule[] = [];
  for (const raw of spec.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const everything = /^all@(\S+)$/.exec(part);
    if (everything) {
      rules.push(...allFaults(probabilityOf(everything[1] ?? '', part)));
      continue;
    }
    const match = PART.exec(part);
    if (!match) throw new BadFaultsError(part, 'expected point:fault@probability, e.g. store.write:throttle@0.03');
    const [, point = '', fault = '', duration, probability = ''] = match;
    if (!isPoint(point))
      throw new BadFaultsError(part, `unknown point "${point}" (${Object.keys(SIM_FAULT_POINTS).join(', ')})`);
    const known: readonly string[] = SIM_FAULT_POINTS[point];
    if (!known.includes(fault))
      throw new BadFaultsError(part, `${point} has no fault "${fault}" (${known.join(', ')})`);
    const key = `${point}:${fault}`;
    const durationMs = duration === undefined ? DEFAULT_DURATION_MS[key] : Number(duration);
    const rule = { point, fault, probability: probabilityOf(probability, part) };
    rules.push(durationMs === undefined ? rule : { ...rule, durationMs });
  }
  return rules;
}

/** An injected fault (not a bug): the shell and the mailbox cope with it, the checks never count it. */
export class InjectedFault extends Error {
  constructor(
    readonly point: SimFaultPoint,
    readonly fault: string,
  ) {
    super(`injected ${point}:${fault}`);
    // A throttled call to Step Functions is named as the SDK names it, so the shell treats it as AWS's.
    this.name = point === 'sfn.start' && fault === 'throttle' ? 'ThrottlingException' : 'InjectedFault';
  }
}

export const isInjectedFault = (error: unknown): error is InjectedFault => error instanceof InjectedFault;

/** Draws faults for one world: one stream per point, the rules of a point in the spec's order. */
export class Faults {
  private readonly streams = new Map<SimFaultPoint, Rng>();
  /** How often each `point:fault` fired (reported with --trace). */
  readonly fired = new Map<string, number>();

  constructor(
    private readonly rules: readonly SimFaultRule[],
    seed: number,
  ) {
    for (const point of Object.keys(SIM_FAULT_POINTS) as SimFaultPoint[])
      this.streams.set(point, Rng.of(seed, `faults:${point}`));
  }

  /** The fault this call at `point` gets, if any (and its duration). */
  draw(
    point: SimFaultPoint,
    only?: readonly string[],
  ): { readonly fault: string; readonly durationMs: number; readonly rng: Rng } | undefined {
    const rng = this.streams.get(point);
    if (rng === undefined) return undefined;
    for (const rule of this.rules) {
      if (rule.point !== point || (only !== undefined && !only.includes(rule.fault))) continue;
      if (!rng.chance(rule.probability)) continue;
      const key = `${point}:${rule.fault}`;
      this.fired.set(key, (this.fired.get(key) ?? 0) + 1);
      return { fault: rule.fault, durationMs: rule.durationMs ?? 0, rng };
    }
    return undefined;
  }
}
