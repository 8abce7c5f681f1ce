/**
 * Where the embedded stack's faults come from: the stack's options (`faults`, `faultsSeed`: the chaos suite, tests),
 * else the process environment (`CAIRN_FAULTS`, `CAIRN_FAULTS_SEED`: `npm start`, which also takes `--faults` and
 * `--faults-seed`). Only the embedded runtime reads these variables; the deployed functions never do.
 */
import { createFaultInjector, type FaultInjector, type FaultInjectorOptions } from './injector.ts';
import { randomSeed } from './prng.ts';
import { parseFaultSeed, parseFaultSpec } from './spec.ts';

export const FAULTS_VARIABLE = 'CAIRN_FAULTS';
export const FAULTS_SEED_VARIABLE = 'CAIRN_FAULTS_SEED';

export interface FaultsConfig {
  /** `point:fault@probability,...`; absent: `CAIRN_FAULTS`. Blank: no faults. */
  readonly faults?: string | undefined;
  /** absent: `CAIRN_FAULTS_SEED`, else a random seed (reported, so the run can be repeated). */
  readonly faultsSeed?: number | undefined;
}

/**
 * The injector for a stack, or undefined when no fault is asked for. Throws BadFaultsError for a bad spec or seed,
 * before anything starts.
 */
export function faultsOf(
  config: FaultsConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: FaultInjectorOptions = {},
): FaultInjector | undefined {
  const spec = config.faults ?? env[FAULTS_VARIABLE] ?? '';
  const rules = parseFaultSpec(spec);
  const given = config.faultsSeed ?? env[FAULTS_SEED_VARIABLE];
  const seed =
    given === undefined || given === ''
      ? randomSeed()
      : parseFaultSeed(given, config.faultsSeed === undefined ? FAULTS_SEED_VARIABLE : 'faultsSeed');
  if (rules.length === 0) return undefined;
  return createFaultInjector(rules, seed, options);
}
