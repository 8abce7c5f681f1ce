/**
 * The capability's answer, the one thing checked at execution: the binding is called (side-effecting capabilities
 * at most once per step generation, through their idempotency record), and the answer's form is checked — JSON, a
 * size a step record can hold, a confidence between 0 and 1. Whether the output is *right* (its contract, the
 * success criteria, the confidence threshold) is verification's business, not this module's.
 */
import {
  CAPABILITY_ERROR_CODES,
  type CapabilityFailure,
  toCapabilityFailure,
  usageOfError,
} from '../../capabilities/capability-errors.ts';
import { isValidConfidence } from '../../capabilities/wire.ts';
import { DEFAULT_IDEMPOTENCY_TTL_SECONDS, DEFAULT_MAX_OUTPUT_BYTES } from '../../config/defaults.ts';
import { type PriceTable, priceUsage } from '../../engine/budget.ts';
import type { SideEffect } from '../../plan/schema.ts';
import type {
  CapabilityBinding,
  CapabilityCall,
  CapabilityRegistry,
  CapabilityResult,
  ModelUsage,
} from '../../ports/capabilities.ts';
import type { Store } from '../../ports/store.ts';
import { type CheckedAnswer, callOnce, type OnceResult, type StartGate } from './idempotent-call.ts';

export interface CapabilityCallConfig {
  /** Largest output (JSON bytes) a step may produce; DynamoDB items hold 400 KB and SFN payloads 256 KB. */
  readonly maxOutputBytes?: number;
  /** How long a side effect's recorded result answers replays (default one day). */
  readonly idempotencyTtlSeconds?: number;
  /** How long an unfinished side-effecting call keeps others from calling (default 900 s, the Lambda maximum). */
  readonly idempotencyInProgressSeconds?: number;
  /** CAIRN_PRICES: prices the usage of a binding that reports tokens but no cost. */
  readonly prices?: PriceTable;
}

// The deployment's defaults have one owner; a caller that passes no config gets the same ones.
export { DEFAULT_IDEMPOTENCY_TTL_SECONDS, DEFAULT_MAX_OUTPUT_BYTES };
export const DEFAULT_IDEMPOTENCY_IN_PROGRESS_SECONDS = 900;

export interface CapabilityCallDeps {
  readonly store: Store;
  readonly registry: CapabilityRegistry;
  readonly clock: () => Date;
  readonly config?: CapabilityCallConfig | undefined;
}

/**
 * A bound on one call (the step's or the run's seconds, shared/engine/step-seconds.ts): once `remainingMs()` (asked
 * as the binding is invoked, after a side effect's record and gate) has passed, the call is abandoned and answers
 * `failure()`. The binding is sent an AbortSignal so one that can stop (an HTTP request) does; one that
 * cannot is raced and left behind. The abandoned answer is recorded like an unusable one (phase `answer`): a
 * side-effecting call may still act after it, so a replay must not call again.
 */
export interface CallTimeLimit {
  readonly remainingMs: () => number;
  readonly failure: () => CapabilityFailure;
}

/**
 * The answer (`replayed`: it came from the idempotency record, the side effect was not made again), or `refused`:
 * the gate said a side effect may no longer start, and nothing was called.
 */
export type CallResult = OnceResult;

/** Calls the capability; one with a side effect asks `mayStart` right before it acts. */
export type CapabilityCaller = (
  call: CapabilityCall,
  sideEffect: SideEffect,
  mayStart?: StartGate,
  limit?: CallTimeLimit,
) => Promise<CallResult>;

const jsonBytes = (text: string): number => Buffer.byteLength(text, 'utf8');

export function createCapabilityCaller(deps: CapabilityCallDeps): CapabilityCaller {
  const { store, registry, clock } = deps;
  const maxOutputBytes = deps.config?.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const prices = deps.config?.prices ?? {};
  // Priced by the model the binding names (Bedrock's modelId, an OpenAI-compatible model), else by the target.
  const priced = (usage: ModelUsage | undefined, evidence: Record<string, unknown>, target: string) => {
    if (usage === undefined) return {};
    const named = [evidence.modelId, evidence.model].map((v) => (typeof v === 'string' ? v : undefined));
    return { usage: priceUsage(usage, prices, [...named, target]) };
  };
  const times = {
    clock,
    ttlSeconds: deps.config?.idempotencyTtlSeconds ?? DEFAULT_IDEMPOTENCY_TTL_SECONDS,
    inProgressSeconds: deps.config?.idempotencyInProgressSeconds ?? DEFAULT_IDEMPOTENCY_IN_PROGRESS_SECONDS,
  };

  async function invoke(call: CapabilityCall, limit: CallTimeLimit | undefined): Promise<CheckedAnswer> {
    const binding = registry.binding(call.target);
    if (!binding)
      return {
        ok: false,
        phase: 'call',
        failure: {
          code: CAPABILITY_ERROR_CODES.noBinding,
          message: `no binding is configured for ${call.target}`,
          retryable: false,
        },
      };
    const started = performance.now();
    const ran = () => ({ binding: binding.kind, durationMs: Math.round(performance.now() - started) });
    let result: Awaited<ReturnType<typeof binding.invoke>> | Abandoned;
    try {
      result = await bounded(binding, call, limit);
    } catch (error) {
      const evidence = ran();
      return {
        ok: false,
        phase: 'call',
        failure: toCapabilityFailure(error),
        evidence,
        ...priced(usageOfError(error), evidence, call.target),
      };
    }
    if (result instanceof Abandoned)
      return { ok: false, phase: 'answer', failure: result.failure, evidence: { ...ran(), abandoned: true } };
    const evidence = { ...ran(), ...result.evidence };
    const usage = priced(result.usage, evidence, call.target);
    const unusable = (code: string, message: string): CheckedAnswer => ({
      ok: false,
      phase: 'answer',
      failure: { code, message, retryable: false },
      evidence,
      ...usage,
    });
    let text: string | undefined;
    try {
      text = JSON.stringify(result.output);
    } catch (error) {
      return unusable(CAPABILITY_ERROR_CODES.malformedAnswer, `the output is not JSON: ${(error as Error).message}`);
    }
    if (text === undefined)
      return unusable(CAPABILITY_ERROR_CODES.malformedAnswer, 'the capability returned no output');
    const bytes = jsonBytes(text);
    if (bytes > maxOutputBytes)
      return unusable(
        CAPABILITY_ERROR_CODES.outputTooLarge,
        `the output of ${call.target} is ${bytes} bytes of JSON, over the limit of ${maxOutputBytes} bytes ` +
          '(step results live in one DynamoDB item and travel in 256 KB Step Functions payloads); ' +
          'return a reference to the data (for example an S3 URL) instead of the data itself',
      );
    if (result.confidence !== undefined && !isValidConfidence(result.confidence))
      return unusable(
        CAPABILITY_ERROR_CODES.modelAnswer,
        `confidence ${String(result.confidence)} is not a number from 0 to 1`,
      );
    return {
      ok: true,
      // Parsed back so what is verified is exactly what is stored (no undefined fields, no class instances).
      output: JSON.parse(text) as unknown,
      evidence,
      ...usage,
      ...(result.confidence === undefined ? {} : { confidence: result.confidence }),
      ...(result.note === undefined ? {} : { note: result.note }),
    };
  }

  return async (call, sideEffect, mayStart, limit) =>
    sideEffect === 'none'
      ? { answer: await invoke(call, limit), replayed: false }
      : callOnce(store, call.idempotencyKey, times, () => invoke(call, limit), mayStart);
}

/** setTimeout's ceiling (2^31 - 1 ms): a longer delay is taken as 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A call its time limit abandoned, with the failure it answers. */
class Abandoned {
  constructor(readonly failure: CapabilityFailure) {}
}

/** The binding's answer, or Abandoned once the limit passes first (the binding's signal is aborted then). */
async function bounded(
  binding: CapabilityBinding,
  call: CapabilityCall,
  limit: CallTimeLimit | undefined,
): Promise<CapabilityResult | Abandoned> {
  // A limit past what a timer can hold (about 24.8 days) would fire at once; no call outlives one anyway.
  const ms = limit?.remainingMs();
  if (limit === undefined || ms === undefined || ms > MAX_TIMER_MS) return binding.invoke(call);
  // Spent while the side effect's record and gate were read: it is not started at all.
  if (ms <= 0) return new Abandoned(limit.failure());
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<Abandoned>((resolve) => {
    timer = setTimeout(() => {
      const abandoned = new Abandoned(limit.failure());
      controller.abort(abandoned.failure);
      resolve(abandoned);
    }, ms);
  });
  const answered = binding.invoke({ ...call, signal: controller.signal });
  // An answer (or failure) that comes after the limit is dropped: nothing is waiting for it any more.
  answered.catch(() => undefined);
  try {
    return await Promise.race([answered, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** A failure of the call as a step error. */
export function failureOf(failure: CapabilityFailure): {
  code: string;
  message: string;
  retryable: boolean;
  details?: never;
} {
  return {
    code: failure.code,
    message: failure.message,
    retryable: failure.retryable,
    ...(failure.details === undefined ? {} : { details: failure.details as never }),
  };
}
