/**
 * The account quotas the embedded runtime rehearses (`npm start -- --aws-quotas`, CAIRN_AWS_QUOTAS=1), with AWS's
 * default numbers, and the two that can be set lower to force throttling:
 * - Step Functions StartExecution (Standard): a token bucket of 1,300 with a refill of 300 a second (us-east-1,
 *   us-west-2, eu-west-1; 800 and 150 in the other regions). `--sfn-start-rate N` sets the refill, and the bucket in
 *   the same proportion (N × 13/3). A throttled start is a `ThrottlingException` ("Rate exceeded", HTTP 400).
 * - Lambda: 1,000 concurrent executions in the account (less on a new account). `--lambda-concurrency N` sets it.
 *   A synchronous invocation beyond it is throttled (`TooManyRequestsException`, Reason
 *   ConcurrentInvocationLimitExceeded; in a Task `Lambda.TooManyRequestsException`); an asynchronous one waits.
 * - DynamoDB: 1,000 write units and 3,000 read units a second per partition key (partition-throughput.ts).
 * - API Gateway: the API's request ends at 29 s (the API Lambda's timeout; the HTTP API's own integration timeout,
 *   30 s, comes after it) with a bare 500.
 * Always enforced, quotas or not (aws-limits.ts): Step Functions' 256 KB payloads (`States.DataLimitExceeded`),
 * Lambda's 6 MB request and response, DynamoDB's 400 KB items, EventBridge's 256 KB PutEvents.
 */
import { CairnError } from '../../../shared/errors.ts';

export const AWS_DEFAULT_QUOTAS = Object.freeze({
  lambdaConcurrency: 1000,
  sfnStartBucket: 1300,
  sfnStartRefillPerSecond: 300,
  partitionReadUnitsPerSecond: 3000,
  partitionWriteUnitsPerSecond: 1000,
  /** The API Lambda's timeout (FUNCTION_TIMEOUT_SECONDS.Api: the CDK app is not loaded at boot for one number). */
  apiTimeoutMs: 29_000,
});

export type AwsQuotas = { readonly [K in keyof typeof AWS_DEFAULT_QUOTAS]: number };

/** What a command line or the environment asks for: quotas on, and the two that may be lowered. */
export interface AwsQuotasOptions {
  /** The account's Lambda concurrency (default 1,000). */
  readonly lambdaConcurrency?: number;
  /** StartExecution refill per second (default 300); the bucket follows in AWS's proportion. */
  readonly sfnStartRate?: number;
  /** Any quota set as it is, over the above (tests and benchmarks: a partition's units, the API's time). */
  readonly overrides?: Partial<AwsQuotas>;
}

/** A quota that is not a positive whole number. */
export class BadQuotasError extends CairnError {
  static readonly code = 'E_BAD_QUOTAS';
  constructor(message: string) {
    super('BadQuotasError', message, { retryable: false, context: { code: BadQuotasError.code } });
  }
}

/** StartExecution's bucket for a refill rate, in the proportion of AWS's default (1,300 for 300 a second). */
export const sfnBucketFor = (refillPerSecond: number): number =>
  Math.max(
    1,
    Math.round((refillPerSecond * AWS_DEFAULT_QUOTAS.sfnStartBucket) / AWS_DEFAULT_QUOTAS.sfnStartRefillPerSecond),
  );

export function resolveQuotas(options: AwsQuotasOptions = {}): AwsQuotas {
  const positive = (name: string, value: number | undefined): void => {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 1))
      throw new BadQuotasError(`${name} must be a whole number of 1 or more, got ${value}`);
  };
  positive('the Lambda concurrency', options.lambdaConcurrency);
  positive('the StartExecution rate', options.sfnStartRate);
  for (const [name, value] of Object.entries(options.overrides ?? {})) positive(name, value);
  const rate = options.sfnStartRate;
  return {
    ...AWS_DEFAULT_QUOTAS,
    ...(options.lambdaConcurrency === undefined ? {} : { lambdaConcurrency: options.lambdaConcurrency }),
    ...(rate === undefined ? {} : { sfnStartRefillPerSecond: rate, sfnStartBucket: sfnBucketFor(rate) }),
    ...options.overrides,
  };
}

const number = (name: string, raw: string | undefined): number | undefined => {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\d+$/.test(raw.trim())) throw new BadQuotasError(`${name} must be a whole number, got "${raw}"`);
  return Number(raw.trim());
};

/**
 * The quotas the environment asks for: CAIRN_AWS_QUOTAS=1 (or true) turns them on, CAIRN_LAMBDA_CONCURRENCY and
 * CAIRN_SFN_START_RATE lower them (and turn them on); undefined when none is set.
 */
export function quotasFromEnv(env: Readonly<Record<string, string | undefined>>): AwsQuotasOptions | undefined {
  const flag = env.CAIRN_AWS_QUOTAS?.trim().toLowerCase();
  if (flag !== undefined && flag !== '' && !['1', 'true', '0', 'false'].includes(flag))
    throw new BadQuotasError(`CAIRN_AWS_QUOTAS must be 1 or 0, got "${env.CAIRN_AWS_QUOTAS}"`);
  const lambdaConcurrency = number('CAIRN_LAMBDA_CONCURRENCY', env.CAIRN_LAMBDA_CONCURRENCY);
  const sfnStartRate = number('CAIRN_SFN_START_RATE', env.CAIRN_SFN_START_RATE);
  const on = flag === '1' || flag === 'true';
  if (!on && lambdaConcurrency === undefined && sfnStartRate === undefined) return undefined;
  return {
    ...(lambdaConcurrency === undefined ? {} : { lambdaConcurrency }),
    ...(sfnStartRate === undefined ? {} : { sfnStartRate }),
  };
}

/**
 * The decider's pace of step starts under these quotas: four fifths of StartExecution's refill and half its bucket,
 * so the run machines' starts (POST /runs) find tokens too. A start beyond it is deferred by the run's decider.
 */
export const startPacingWithin = (quotas: AwsQuotas): { ratePerSecond: number; burst: number } => ({
  ratePerSecond: Math.max(1, Math.floor(quotas.sfnStartRefillPerSecond * 0.8)),
  burst: Math.max(1, Math.floor(quotas.sfnStartBucket / 2)),
});

/** The quotas as one line each, for the start-up log. */
export function describeQuotas(quotas: AwsQuotas): string[] {
  return [
    `Lambda concurrency ${quotas.lambdaConcurrency} (synchronous invocations beyond it throttled, asynchronous ones wait)`,
    `StartExecution bucket ${quotas.sfnStartBucket}, refill ${quotas.sfnStartRefillPerSecond}/s`,
    `DynamoDB ${quotas.partitionWriteUnitsPerSecond} write and ${quotas.partitionReadUnitsPerSecond} read units/s per partition key`,
    `API requests end at ${quotas.apiTimeoutMs / 1000} s`,
  ];
}
