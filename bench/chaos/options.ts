/**
 * `npm run chaos -- --runs N --faults SPEC [--seed S] [--concurrency C] [--bound-ms MS] [--only i,j]
 * [--faults-seed S] [--cancel-rate P] [--invalidate-rate P] [--retry-interval-ms MS|asl] [--read-under-faults]
 * [--verbose]`: the command line, parsed and checked.
 */
import type { ChaosOptions } from './runner.ts';

export const USAGE = `usage: npm run chaos -- [--runs N] [--faults SPEC] [--seed S] [--concurrency C]
  --runs N             runs to drive (default 30)
  --faults SPEC        point:fault@probability,... (CAIRN_FAULTS; default: none)
  --seed S             the suite's seed (default: random, printed); a run is re-run by its seed and index
  --concurrency C      runs at a time (default 4)
  --bound-ms MS        how long a run may take to end (default 60000)
  --retry-interval-ms MS|asl
                       every Task's Retry pause (default 50); asl: the machines' own (1 s doubling, jittered)
  --read-under-faults  read the runs back with the faults on (default: paused once the stack is quiet; a run
                       that cannot be read is then not checked)
  --only i,j           run only these run indexes of the seed
  --faults-seed S      CAIRN_FAULTS_SEED (default: the suite's seed)
  --cancel-rate P      chance of a cancel per run, 0..1 (default 0.2)
  --invalidate-rate P  chance of invalidations per run, 0..1 (default 0.3)
  --lambda-concurrency N
                       the account's Lambda concurrency under the AWS quotas (default AWS's 1,000)
  --sfn-start-rate N   StartExecution refilled N a second, its bucket in AWS's proportion (default AWS's 300)
  --no-quotas          run without the AWS account quotas (on by default: npm start --aws-quotas)
  --dump FILE          write what the runs with a violation left (plan, actions, steps, attempts, events, ledger, store records)
                       to FILE as JSON
  --verbose            one line per run as it ends`;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface CommandLine {
  readonly options: Omit<ChaosOptions, 'log'>;
  readonly verbose: boolean;
  readonly help: boolean;
  readonly dump?: string;
}

const integer = (flag: string, raw: string, min: number): number => {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min)
    throw new UsageError(`${flag} must be an integer ≥ ${min}, not "${raw}"`);
  return value;
};

const chance = (flag: string, raw: string): number => {
  const value = Number(raw);
  if (raw.trim() === '' || !(value >= 0 && value <= 1)) throw new UsageError(`${flag} must be in 0..1, not "${raw}"`);
  return value;
};

export function parseCommandLine(argv: readonly string[], randomSeed: () => number): CommandLine {
  const given = new Map<string, string>();
  let verbose = false;
  let help = false;
  let readUnderFaults = false;
  let noQuotas = false;
  const valued = [
    '--runs',
    '--faults',
    '--seed',
    '--concurrency',
    '--bound-ms',
    '--only',
    '--faults-seed',
    '--dump',
    '--retry-interval-ms',
    '--lambda-concurrency',
    '--sfn-start-rate',
  ];
  const rates = ['--cancel-rate', '--invalidate-rate'];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag = '', inline] = arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    if (flag === '--verbose') verbose = true;
    else if (flag === '--read-under-faults') readUnderFaults = true;
    else if (flag === '--no-quotas') noQuotas = true;
    else if (flag === '--help' || flag === '-h') help = true;
    else if (valued.includes(flag) || rates.includes(flag)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      given.set(flag, value);
    } else throw new UsageError(`unknown argument "${arg}"`);
  }
  const value = (flag: string) => given.get(flag);
  const seed = value('--seed') === undefined ? randomSeed() : integer('--seed', value('--seed') as string, 0);
  const only = value('--only')
    ?.split(',')
    .map((s) => integer('--only', s.trim(), 0));
  const faultsSeed = value('--faults-seed');
  const cancelRate = value('--cancel-rate');
  const invalidateRate = value('--invalidate-rate');
  const dump = value('--dump');
  const retryInterval = value('--retry-interval-ms');
  const lambdaConcurrency = value('--lambda-concurrency');
  const sfnStartRate = value('--sfn-start-rate');
  if (noQuotas && (lambdaConcurrency !== undefined || sfnStartRate !== undefined))
    throw new UsageError('--no-quotas and a lowered quota exclude each other');
  return {
    verbose,
    help,
    ...(dump === undefined ? {} : { dump }),
    options: {
      runs: integer('--runs', value('--runs') ?? '30', 1),
      seed,
      faults: value('--faults') ?? '',
      concurrency: integer('--concurrency', value('--concurrency') ?? '4', 1),
      boundMs: integer('--bound-ms', value('--bound-ms') ?? '60000', 1),
      ...(only === undefined ? {} : { only }),
      ...(faultsSeed === undefined ? {} : { faultsSeed: integer('--faults-seed', faultsSeed, 0) }),
      ...(cancelRate === undefined ? {} : { cancelRate: chance('--cancel-rate', cancelRate) }),
      ...(invalidateRate === undefined ? {} : { invalidateRate: chance('--invalidate-rate', invalidateRate) }),
      ...(retryInterval === undefined
        ? {}
        : { retryIntervalMs: retryInterval === 'asl' ? 'asl' : integer('--retry-interval-ms', retryInterval, 0) }),
      ...(readUnderFaults ? { readUnderFaults } : {}),
      awsQuotas: noQuotas
        ? false
        : {
            ...(lambdaConcurrency === undefined
              ? {}
              : { lambdaConcurrency: integer('--lambda-concurrency', lambdaConcurrency, 1) }),
            ...(sfnStartRate === undefined ? {} : { sfnStartRate: integer('--sfn-start-rate', sfnStartRate, 1) }),
          },
    },
  };
}
