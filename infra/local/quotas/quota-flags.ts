/**
 * `npm start`'s side of the quotas: the flags (`--aws-quotas`, `--lambda-concurrency N`, `--sfn-start-rate N`, each
 * over the environment's CAIRN_AWS_QUOTAS, CAIRN_LAMBDA_CONCURRENCY, CAIRN_SFN_START_RATE), and the log lines: the
 * quotas at start, the throttles absorbed every few seconds while they change, and their totals at the end.
 */
import {
  type AwsQuotas,
  type AwsQuotasOptions,
  BadQuotasError,
  describeQuotas,
  quotasFromEnv,
  resolveQuotas,
} from './aws-quotas.ts';
import { formatThrottles } from './throttle-counter.ts';

export const isBadQuotasError = (error: unknown): error is BadQuotasError => error instanceof BadQuotasError;

const whole = (flag: string, raw: unknown): number | undefined => {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw))
    throw new BadQuotasError(`${flag} must be a whole number, got "${String(raw)}"`);
  return Number(raw);
};

/**
 * The quotas a command line asks for over the environment's: `false` when neither turns them on (a stack started
 * so ignores the environment's too, having read it here).
 */
export function quotaOptionsOf(
  values: Readonly<Record<string, string | boolean | undefined>>,
  env: Readonly<Record<string, string | undefined>>,
): AwsQuotasOptions | false {
  const fromEnv = quotasFromEnv(env);
  const lambdaConcurrency = whole('--lambda-concurrency', values['lambda-concurrency']);
  const sfnStartRate = whole('--sfn-start-rate', values['sfn-start-rate']);
  const on =
    values['aws-quotas'] === true ||
    fromEnv !== undefined ||
    lambdaConcurrency !== undefined ||
    sfnStartRate !== undefined;
  if (!on) return false;
  const merged = {
    ...fromEnv,
    ...(lambdaConcurrency === undefined ? {} : { lambdaConcurrency }),
    ...(sfnStartRate === undefined ? {} : { sfnStartRate }),
  };
  resolveQuotas(merged);
  return merged;
}

/** What a stack offers the log: its quotas, and its throttle counts. */
export interface ThrottlingStack {
  readonly quotas?: AwsQuotas;
  stats(): { readonly throttles: Readonly<Record<string, number>> };
}

export const THROTTLE_LOG_MS = 10_000;

/**
 * Logs the quotas, then the throttles absorbed every THROTTLE_LOG_MS while they change (not when quiet); `stop`
 * logs the totals. Nothing at all without quotas.
 */
export function watchThrottles(
  stack: ThrottlingStack,
  out: (line: string) => void,
  options: { readonly quiet: boolean; readonly everyMs?: number },
): { stop(): void } {
  const { quotas } = stack;
  if (quotas === undefined) return { stop: () => {} };
  for (const line of describeQuotas(quotas)) out(`cairn: quota ${line}`);
  let last = formatThrottles(stack.stats().throttles);
  const timer = options.quiet
    ? undefined
    : setInterval(() => {
        const now = formatThrottles(stack.stats().throttles);
        if (now !== last) out(`cairn: throttles absorbed so far: ${now}`);
        last = now;
      }, options.everyMs ?? THROTTLE_LOG_MS);
  timer?.unref();
  return {
    stop() {
      if (timer) clearInterval(timer);
      out(`cairn: throttles absorbed: ${formatThrottles(stack.stats().throttles)}`);
    },
  };
}
