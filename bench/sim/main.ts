/**
 * `npm run sim`: the run decider and its shell, simulated deterministically over a range of seeds. Prints a line per
 * violation (with its seed and run, and how to replay the seed), and last: `sim: N runs, V violations, R runs/s`;
 * exits 1 when anything was violated.
 *
 * Options: `--seeds A..B` (or `--seed N`), `--faults SPEC` (faults.ts; `all@P` for every fault at P),
 * `--runs-per-seed N` (runs sharing one world, side by side), `--trace` (each seed's trace hash, its runs' ends and
 * the faults that fired), `--events` (each run's committed batches), `--coverage` (how often each event, answer,
 * fault and taken version occurred over all seeds), `--except INVARIANT,...` (an open finding's
 * violations counted apart, never silently), `--workers N` (worker threads; default: the machine's cores).
 */
import { availableParallelism } from 'node:os';
import { parseSimFaults, type SimFaultRule } from './faults.ts';
import { runSeeds } from './runner.ts';

export interface SimOptions {
  readonly from: number;
  readonly to: number;
  readonly faults: readonly SimFaultRule[];
  readonly spec: string;
  readonly runsPerSeed: number;
  readonly trace: boolean;
  /** Print each run's committed batches (with --seed, to read what happened). */
  readonly events: boolean;
  /** Print how often each path was taken over all seeds (event types, answers, taken versions, faults). */
  readonly coverage: boolean;
  /** Invariants not counted (an open finding under repair): their violations are counted apart, and said so. */
  readonly except: readonly string[];
  readonly workers: number;
}

export const USAGE =
  'usage: npm run sim -- --seeds A..B | --seed N [--faults point:fault@p,...|all@p] [--runs-per-seed N] [--trace] [--events] [--coverage] [--except INVARIANT,...] [--workers N]';

function integer(flag: string, raw: string | undefined, min: number): number {
  const value = Number(raw);
  if (raw === undefined || !/^\d+$/.test(raw) || value < min)
    throw new Error(`${flag} takes an integer ≥ ${min}\n${USAGE}`);
  return value;
}

export function parseSimOptions(argv: readonly string[]): SimOptions {
  let from = 1;
  let to = 100;
  let spec = '';
  let runsPerSeed = 1;
  let trace = false;
  let events = false;
  let coverage = false;
  let except: string[] = [];
  let workers = Math.min(availableParallelism(), 8);
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    switch (flag) {
      case '--seeds': {
        const match = /^(\d+)\.\.(\d+)$/.exec(value ?? '');
        if (!match) throw new Error(`--seeds takes A..B\n${USAGE}`);
        from = Number(match[1]);
        to = Number(match[2]);
        if (to < from) throw new Error(`--seeds ${value}: B is below A`);
        i++;
        break;
      }
      case '--seed':
        from = to = integer(flag, value, 0);
        i++;
        break;
      case '--faults':
        spec = value ?? '';
        i++;
        break;
      case '--runs-per-seed':
        runsPerSeed = integer(flag, value, 1);
        i++;
        break;
      case '--workers':
        workers = integer(flag, value, 1);
        i++;
        break;
      case '--trace':
        trace = true;
        break;
      case '--events':
        events = true;
        break;
      case '--coverage':
        coverage = true;
        break;
      case '--except':
        except = (value ?? '').split(',').filter((name) => name !== '');
        i++;
        break;
      default:
        throw new Error(`unknown option ${flag}\n${USAGE}`);
    }
  }
  return { from, to, faults: parseSimFaults(spec), spec, runsPerSeed, trace, events, coverage, except, workers };
}

async function main(): Promise<number> {
  let options: ReturnType<typeof parseSimOptions>;
  try {
    options = parseSimOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    return 2;
  }
  const seeds = Array.from({ length: options.to - options.from + 1 }, (_, i) => options.from + i);
  const started = performance.now();
  const job = { spec: options.spec, runsPerSeed: options.runsPerSeed, trace: options.trace, events: options.events };
  const results = await runSeeds(seeds, job, options.workers);
  const seconds = (performance.now() - started) / 1000;
  let runs = 0;
  let violations = 0;
  const excepted = new Map<string, number>();
  for (const result of results.sort((a, b) => a.seed - b.seed)) {
    runs += result.runs;
    let counted = 0;
    for (const v of result.violations) {
      if (options.except.includes(v.invariant)) {
        excepted.set(v.invariant, (excepted.get(v.invariant) ?? 0) + 1);
        continue;
      }
      counted++;
      process.stdout.write(`violation seed=${v.seed} run=${v.runId} [${v.invariant}] ${v.detail}\n`);
    }
    violations += counted;
    if (counted > 0) process.stdout.write(`replay: npm run sim -- ${replayOf(result.seed, options)}\n`);
    for (const line of result.log) process.stdout.write(`${line}\n`);
    if (options.trace) {
      for (const status of result.statuses) process.stdout.write(`seed ${result.seed}: ${status}\n`);
      const fired = result.fired.map(([key, n]) => `${key}×${n}`).join(', ');
      process.stdout.write(
        `seed ${result.seed}: ${result.batches} batches, ${result.tasks} tasks, ${Math.round(result.virtualMs / 1000)} virtual s, ${result.end}${fired ? `; faults ${fired}` : ''}\n`,
      );
      process.stdout.write(`trace ${result.trace}\n`);
    }
  }
  if (options.coverage) {
    const sums = new Map<string, number>();
    for (const result of results)
      for (const [key, n] of [...result.tallies, ...result.fired.map(([k, v]) => [`fault: ${k}`, v] as const)])
        sums.set(key, (sums.get(key) ?? 0) + n);
    for (const [key, n] of [...sums].sort((a, b) => a[0].localeCompare(b[0])))
      process.stdout.write(`coverage ${key}: ${n}\n`);
  }
  const apart = [...excepted].map(([name, n]) => `${n} ${name}`).join(', ');
  if (apart !== '') process.stdout.write(`sim: not counted (--except): ${apart}\n`);
  const rate = Math.round(runs / seconds);
  process.stdout.write(`sim: ${runs} runs, ${violations} violations, ${rate} runs/s\n`);
  return violations === 0 ? 0 : 1;
}

/** The options that replay one seed exactly, and show what happened. */
function replayOf(seed: number, options: ReturnType<typeof parseSimOptions>): string {
  const faults = options.spec === '' ? '' : ` --faults ${options.spec}`;
  const runs = options.runsPerSeed === 1 ? '' : ` --runs-per-seed ${options.runsPerSeed}`;
  return `--seed ${seed}${faults}${runs} --trace --events`;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n${USAGE}\n`);
    process.exitCode = 2;
  },
);
