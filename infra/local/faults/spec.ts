/**
 * The fault spec of the embedded runtime (`CAIRN_FAULTS`, `npm start -- --faults`): a comma-separated list of
 * `point:fault@probability`, optionally `point:fault=MS@probability` for the faults that take a duration. Parsed
 * once at boot; a bad part is refused with `E_BAD_FAULTS` naming it, so a typo never silently injects nothing.
 * Only infra/local and bin read the variable: the deployed functions never see it.
 */
import { CairnError } from '../../../shared/errors.ts';

/** Every point, with the faults it knows. */
export const FAULT_POINTS = {
  'store.write': ['throttle', 'timeout'],
  'store.read': ['throttle', 'timeout'],
  'lambda.invoke': ['throttle', 'timeout', 'crash-after'],
  'sfn.start': ['throttle', 'duplicate'],
  'bus.deliver': ['duplicate', 'delay', 'drop-once'],
  'index.read': ['lag'],
  'capability.call': ['timeout', 'error'],
} as const satisfies Readonly<Record<string, readonly string[]>>;

export type FaultPoint = keyof typeof FAULT_POINTS;
export type FaultName<P extends FaultPoint = FaultPoint> = (typeof FAULT_POINTS)[P][number];

/** The faults that take a duration (`=MS`), and the one they get without it. */
export const DEFAULT_DURATION_MS: Readonly<Record<string, number>> = {
  'bus.deliver:delay': 200,
  'bus.deliver:drop-once': 500,
  'index.read:lag': 1_000,
};

export interface FaultRule {
  readonly point: FaultPoint;
  readonly fault: FaultName;
  /** 0..1: the chance that one call at the point gets this fault. */
  readonly probability: number;
  /** For delay, drop-once (the redelivery) and lag: how long, in milliseconds. */
  readonly durationMs?: number;
}

/** A `CAIRN_FAULTS` / `--faults` value that cannot be used: the message names the part and what is wrong with it. */
export class BadFaultsError extends CairnError {
  static readonly code = 'E_BAD_FAULTS';
  constructor(part: string, problem: string) {
    super(BadFaultsError.code, `bad fault "${part}": ${problem}`, { context: { part }, retryable: false });
  }
}

export const isBadFaultsError = (error: unknown): error is BadFaultsError =>
  error instanceof Error && error.name === BadFaultsError.code;

const PART = /^([a-z]+\.[a-z]+):([a-z-]+)(?:=(\d+)(?:ms)?)?@(\S+)$/;
const PROBABILITY = /^(?:\d+(?:\.\d*)?|\.\d+)%?$/;

function probabilityOf(raw: string, part: string): number {
  if (!PROBABILITY.test(raw)) throw new BadFaultsError(part, `probability "${raw}" is not a number in 0..1 or a %`);
  const value = raw.endsWith('%') ? Number(raw.slice(0, -1)) / 100 : Number(raw);
  if (!(value >= 0 && value <= 1)) throw new BadFaultsError(part, `probability "${raw}" is outside 0..1`);
  return value;
}

const isPoint = (point: string): point is FaultPoint => Object.hasOwn(FAULT_POINTS, point);

/** The rules of a spec, in its order; empty for an empty or blank spec. Throws BadFaultsError. */
export function parseFaultSpec(spec: string): FaultRule[] {
  const rules: FaultRule[] = [];
  const seen = new Set<string>();
  for (const raw of spec.split(',')) {
    const part = raw.trim();
    if (part === '') {
      if (spec.trim() === '') continue;
      throw new BadFaultsError(raw, 'empty entry (a stray comma?)');
    }
    const match = PART.exec(part);
    if (!match) throw new BadFaultsError(part, 'expected point:fault@probability, e.g. store.write:throttle@0.03');
    const [, point = '', fault = '', duration, probability = ''] = match;
    if (!isPoint(point))
      throw new BadFaultsError(part, `unknown point "${point}" (${Object.keys(FAULT_POINTS).join(', ')})`);
    const known: readonly string[] = FAULT_POINTS[point];
    if (!known.includes(fault))
      throw new BadFaultsError(part, `${point} has no fault "${fault}" (${known.join(', ')})`);
    const key = `${point}:${fault}`;
    if (duration !== undefined && DEFAULT_DURATION_MS[key] === undefined)
      throw new BadFaultsError(part, `${key} takes no duration`);
    if (seen.has(key)) throw new BadFaultsError(part, `${key} is given twice`);
    seen.add(key);
    const rule: FaultRule = { point, fault: fault as FaultName, probability: probabilityOf(probability, part) };
    const durationMs = duration === undefined ? DEFAULT_DURATION_MS[key] : Number(duration);
    rules.push(durationMs === undefined ? rule : { ...rule, durationMs });
  }
  return rules;
}

/** A seed: a non-negative integer below 2^32. Throws BadFaultsError naming the variable or flag it came from. */
export function parseFaultSeed(raw: string | number, from = 'CAIRN_FAULTS_SEED'): number {
  const text = String(raw).trim();
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value >= 2 ** 32)
    throw new BadFaultsError(`${from}=${text}`, 'the seed must be an integer in 0..4294967295');
  return value;
}

/** The spec as one line again (for the boot banner and reports): the same text parses to the same rules. */
export function formatFaultSpec(rules: readonly FaultRule[]): string {
  return rules
    .map((rule) => {
      const key = `${rule.point}:${rule.fault}`;
      const duration = rule.durationMs !== undefined && rule.durationMs !== DEFAULT_DURATION_MS[key];
      return `${key}${duration ? `=${rule.durationMs}` : ''}@${rule.probability}`;
    })
    .join(',');
}
