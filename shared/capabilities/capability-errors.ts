/**
 * Capability failures as the engine sees them: a stable code, a message and whether another attempt may help.
 * CapabilityError carries the code in its context (`context.code`) so errors.ts keeps one class per concern; the
 * helpers here build those errors and classify what SDKs, fetch and in-process functions throw.
 */
import { usageOf } from '../engine/usage.ts';
import { CapabilityError, type ErrorContext, isCapabilityError, isRetryable } from '../errors.ts';
import { boundJson, clipMessage, messageOf } from '../plan/bounded-text.ts';
import type { ModelUsage } from '../ports/capabilities.ts';

export const CAPABILITY_ERROR_CODES = {
  /** Anything a binding threw without saying what it was. */
  failed: 'E_CAPABILITY',
  /** No binding is configured for the target. */
  noBinding: 'E_NO_BINDING',
  timeout: 'E_CAPABILITY_TIMEOUT',
  throttled: 'E_CAPABILITY_THROTTLED',
  /** 5xx, connection refused/reset, service exceptions. */
  unavailable: 'E_CAPABILITY_UNAVAILABLE',
  /** The capability refused the request (4xx other than 408/429, access denied, not found...). */
  rejected: 'E_CAPABILITY_REJECTED',
  /** The answer is not JSON or not the documented shape. */
  malformedAnswer: 'E_MALFORMED_ANSWER',
  /** A Lambda function raised (FunctionError). */
  functionError: 'E_FUNCTION_ERROR',
  /** An MCP tool answered with `isError` (it ran and reported a failure). */
  toolError: 'E_TOOL_ERROR',
  /** A model's answer is not exactly one well-formed `submit_result` call. */
  modelAnswer: 'E_MODEL_ANSWER',
  /** Another execution of the same step generation holds the idempotency record. */
  idempotencyInProgress: 'E_IDEMPOTENCY_IN_PROGRESS',
  inputSchema: 'E_INPUT_SCHEMA',
  outputTooLarge: 'E_OUTPUT_TOO_LARGE',
  /** An HTTP binding's host is (or resolves to) a loopback, private or link-local address and it is not internal. */
  addressRefused: 'E_ADDRESS_REFUSED',
  /** An HTTP binding was answered with a redirect it may not follow (none, or one to another origin). */
  redirectRefused: 'E_REDIRECT_REFUSED',
  /** A header, key or environment value the binding names by reference could not be read (secret-ref.ts). */
  secretUnavailable: 'E_SECRET_UNAVAILABLE',
} as const;

export interface CapabilityFailure {
  readonly code: string;
  readonly message: string;
  readonly retryable: boolean;
  readonly details?: unknown;
}

export function capabilityError(
  code: string,
  message: string,
  options: { retryable: boolean; details?: unknown; cause?: unknown; context?: ErrorContext },
): CapabilityError {
  const context: Record<string, unknown> = { ...options.context, code };
  if (options.details !== undefined) context.details = options.details;
  return new CapabilityError(message, { retryable: options.retryable, cause: options.cause, context });
}

/**
 * What an HTTP error status means for a capability call, for every binding that speaks HTTP (an HTTP endpoint, an
 * MCP server over Streamable HTTP): 429 throttled, 408 timed out, 5xx unavailable (all retryable); any other status
 * rejected (permanent).
 */
export function httpStatusFailure(status: number): { readonly code: string; readonly retryable: boolean } {
  if (status === 429) return { code: CAPABILITY_ERROR_CODES.throttled, retryable: true };
  if (status === 408) return { code: CAPABILITY_ERROR_CODES.timeout, retryable: true };
  if (status >= 500) return { code: CAPABILITY_ERROR_CODES.unavailable, retryable: true };
  return { code: CAPABILITY_ERROR_CODES.rejected, retryable: false };
}

/**
 * The tokens a failed model call consumed: a binding whose model answered unusably puts them in the error's
 * `context.usage`, so the failed attempt still accounts for them.
 */
export function usageOfError(error: unknown): ModelUsage | undefined {
  if (!isCapabilityError(error)) return undefined;
  const usage = (error as CapabilityError).context.usage as Partial<ModelUsage> | undefined;
  return usage === undefined || usage === null ? undefined : usageOf(usage.inputTokens, usage.outputTokens);
}

/** A failure's code is a name, not prose: a capability that reports a longer one has it cut to this. */
const MAX_CODE_CHARS = 100;
/** What a failure keeps of its `details`, in characters of JSON (plan/bounded-text.ts boundJson). */
export const MAX_FAILURE_DETAILS_CHARS = 4096;

/**
 * The engine's view of any error a binding threw: CapabilityErrors keep their code; the rest is classified. Bounded
 * here, where every binding's failure passes (plan/bounded-text.ts): a tool, a model or a remote server says what
 * it likes, and the step, its attempt and the run's evidence keep it.
 */
export function toCapabilityFailure(error: unknown): CapabilityFailure {
  if (isCapabilityError(error)) {
    const context = (error as CapabilityError).context;
    const code = typeof context.code === 'string' ? context.code : CAPABILITY_ERROR_CODES.failed;
    const failure = {
      code: clipMessage(code, MAX_CODE_CHARS),
      message: messageOf(error),
      retryable: (error as CapabilityError).retryable,
    };
    return context.details === undefined
      ? failure
      : { ...failure, details: boundJson(context.details, MAX_FAILURE_DETAILS_CHARS).value };
  }
  return { code: CAPABILITY_ERROR_CODES.failed, message: messageOf(error), retryable: isRetryable(error) };
}

const THROTTLING_NAMES = new Set([
  'ThrottlingException',
  'TooManyRequestsException',
  'Throttling',
  'ThrottledException',
  'RequestLimitExceeded',
  'ProvisionedThroughputExceededException',
  'ServiceQuotaExceededException',
  'EC2ThrottledException',
]);
const TRANSIENT_NAMES = new Set([
  'ServiceException',
  'ServiceUnavailableException',
  'InternalServerException',
  'InternalServerError',
  'InternalFailure',
  'ModelNotReadyException',
  'ResourceNotReadyException',
  'ResourceConflictException',
  'EC2UnexpectedException',
  'ENILimitReachedException',
  'SubnetIPAddressLimitReachedException',
  'SnapStartNotReadyException',
  'SnapStartTimeoutException',
]);
const TIMEOUT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException', 'ModelTimeoutException']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND']);

interface SdkErrorShape {
  name?: unknown;
  code?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $retryable?: unknown;
}

/**
 * Classifies an error thrown by an AWS SDK v3 client call: throttling, timeouts, 5xx and network failures are
 * retryable; everything else the service answered (validation, access denied, not found) is permanent.
 */
export function sdkCallError(error: unknown, what: string, context: ErrorContext = {}): CapabilityError {
  const shape = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape;
  const name = typeof shape.name === 'string' ? shape.name : 'Error';
  const status = typeof shape.$metadata?.httpStatusCode === 'number' ? shape.$metadata.httpStatusCode : undefined;
  const networkCode = typeof shape.code === 'string' && NETWORK_CODES.has(shape.code);
  const message = `${what} failed: ${name}: ${messageOf(error)}`;
  const details = { errorName: name, ...(status === undefined ? {} : { httpStatusCode: status }) };
  const make = (code: string, retryable: boolean) =>
    capabilityError(code, message, { retryable, details, cause: error, context });
  if (THROTTLING_NAMES.has(name) || status === 429 || (shape.$retryable as { throttling?: unknown })?.throttling)
    return make(CAPABILITY_ERROR_CODES.throttled, true);
  if (TIMEOUT_NAMES.has(name) || status === 408 || status === 504 || name === 'AbortError')
    return make(CAPABILITY_ERROR_CODES.timeout, true);
  if (TRANSIENT_NAMES.has(name) || networkCode || (status !== undefined && status >= 500))
    return make(CAPABILITY_ERROR_CODES.unavailable, true);
  // A client-side fault the service never answered (no status) is a connection problem: try again.
  if (status === undefined && shape.$fault !== 'client') return make(CAPABILITY_ERROR_CODES.unavailable, true);
  return make(CAPABILITY_ERROR_CODES.rejected, false);
}
