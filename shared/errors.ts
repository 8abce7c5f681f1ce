/**
 * One base class for every error cairn raises on purpose. Subclasses carry a stable `name` (Step Functions
 * `Retry`/`Catch` and the API's error mapping match on it, and it survives bundling where `instanceof` may not),
 * a `retryable` flag, and a context object that says which run, step or item the failure was about.
 */
export type ErrorContext = Readonly<Record<string, unknown>>;

export interface CairnErrorOptions {
  readonly cause?: unknown;
  readonly context?: ErrorContext;
  readonly retryable?: boolean;
}

export class CairnError extends Error {
  readonly retryable: boolean;
  readonly context: ErrorContext;

  constructor(name: string, message: string, options: CairnErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = name;
    this.retryable = options.retryable ?? false;
    this.context = options.context ?? {};
  }

  toJSON(): { name: string; message: string; retryable: boolean; context: ErrorContext } {
    return { name: this.name, message: this.message, retryable: this.retryable, context: this.context };
  }
}

/** A plan, catalog or request that breaks the contract. Never retryable: the same input fails the same way. */
export class ValidationError extends CairnError {
  readonly errors: readonly { code: string; path: string; message: string }[];
  constructor(
    message: string,
    errors: readonly { code: string; path: string; message: string }[],
    options: CairnErrorOptions = {},
  ) {
    super('ValidationError', message, { ...options, retryable: false });
    this.errors = errors;
  }
}

/** A capability catalog that cannot be used (bad JSON, bad contract, remote `$ref`, foreign dialect). */
export class CatalogError extends CairnError {
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('CatalogError', message, { ...options, retryable: false });
  }
}

/** The planner could not produce a plan (bad mode, model answer unusable, generated plan invalid). */
export class PlannerError extends CairnError {
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('PlannerError', message, options);
  }
}

/** A model provider failed; retryable when the provider says so (throttling, 5xx). */
export class ModelError extends CairnError {
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('ModelError', message, options);
  }
}

/** A conditional write lost: someone else already holds or changed the item. */
export class ConflictError extends CairnError {
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('ConflictError', message, { ...options, retryable: options.retryable ?? false });
  }
}

export class NotFoundError extends CairnError {
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('NotFoundError', message, { ...options, retryable: false });
  }
}

/** A capability call failed. `retryable` decides whether the step burns a retry or fails at once. */
export class CapabilityError extends CairnError {
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('CapabilityError', message, options);
  }
}

/**
 * Something too large to keep: an item that stays over DynamoDB's 400 KB (cairn stops at 350 KB) after its long
 * strings moved out of line, or a request over the API's limits. Never retryable: the same payload is refused again, so the caller fails the step with this error instead.
 */
export class PayloadTooLargeError extends CairnError {
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('PayloadTooLargeError', message, { ...options, retryable: false });
  }
}

/**
 * A plan expression hit one of its bounds (time, recursion depth, sequence or string size, memory). Never
 * retryable: the same expression over the same values hits the same bound, so the step fails with
 * `E_EXPRESSION_LIMIT` at once.
 */
export class ExpressionLimitError extends CairnError {
  static readonly code = 'E_EXPRESSION_LIMIT';
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('ExpressionLimitError', message, { ...options, retryable: false });
  }
}

/**
 * Events that no EventBridge PutEvents request can carry: each alone is over the request's size limit. Never
 * retryable (the same event is as large next time); a publisher raises it after it has put every other event, so
 * one event that should have been bounded (events/bounded-details.ts) costs only itself.
 */
export class EventTooLargeError extends CairnError {
  static readonly code = 'E_EVENT_TOO_LARGE';
  constructor(
    oversized: readonly { readonly detailType: string; readonly runId?: unknown; readonly bytes: number }[],
    limit: number,
  ) {
    const names = oversized.map((o) => `${o.detailType} (${o.bytes} bytes)`).join(', ');
    super('EventTooLargeError', `${oversized.length} event(s) over the PutEvents limit of ${limit} bytes: ${names}`, {
      retryable: false,
      context: {
        code: EventTooLargeError.code,
        limit,
        events: oversized.map((o) => ({ detailType: o.detailType, runId: o.runId, bytes: o.bytes })),
      },
    });
  }
}

/**
 * A stream batch the outbox relay gave up on whose records the table's stream no longer holds (it keeps them 24
 * hours, or the shard is gone): its announcements can no longer be read back. Never retryable: the redrive reports
 * it and leaves its dead letter in the queue for a person (docs/deploy.md).
 */
export class StreamRecordsExpiredError extends CairnError {
  static readonly code = 'E_STREAM_RECORDS_EXPIRED';
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('StreamRecordsExpiredError', message, {
      ...options,
      retryable: false,
      context: { code: StreamRecordsExpiredError.code, ...options.context },
    });
  }
}

/**
 * A read of a stream batch that did not reach the batch's last record within its bound of pages (a shard of many
 * writes the mapping's filter passed over). Retryable: the dead letter stays, and the next redrive reads again.
 */
export class StreamReadIncompleteError extends CairnError {
  static readonly code = 'E_STREAM_READ_INCOMPLETE';
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('StreamReadIncompleteError', message, {
      ...options,
      retryable: true,
      context: { code: StreamReadIncompleteError.code, ...options.context },
    });
  }
}

/**
 * A tenant's admission record moved under a writer: another pass (a run queued, a run ended) wrote its version first.
 * Retryable: the writer reads the record and the queue again and decides again (shared/services/admission.ts); one
 * that keeps losing fails its request or its batch, which is delivered again.
 */
export class AdmissionConflictError extends CairnError {
  static readonly code = 'E_ADMISSION_CONFLICT';
  constructor(tenant: string, version: number, options: CairnErrorOptions = {}) {
    super('AdmissionConflictError', `the admission record of tenant ${tenant} is no longer at version ${version}`, {
      ...options,
      retryable: true,
      context: { code: AdmissionConflictError.code, tenant, version, ...options.context },
    });
  }
}

const hasName = (error: unknown, name: string): boolean =>
  typeof error === 'object' && error !== null && (error as { name?: unknown }).name === name;

export const isCairnError = (error: unknown): error is CairnError =>
  typeof error === 'object' &&
  error !== null &&
  typeof (error as { name?: unknown }).name === 'string' &&
  typeof (error as { retryable?: unknown }).retryable === 'boolean' &&
  typeof (error as { context?: unknown }).context === 'object';
export const isValidationError = (e: unknown): e is ValidationError => hasName(e, 'ValidationError');
export const isCatalogError = (e: unknown): e is CatalogError => hasName(e, 'CatalogError');
export const isPlannerError = (e: unknown): e is PlannerError => hasName(e, 'PlannerError');
export const isModelError = (e: unknown): e is ModelError => hasName(e, 'ModelError');
export const isConflictError = (e: unknown): e is ConflictError => hasName(e, 'ConflictError');
export const isNotFoundError = (e: unknown): e is NotFoundError => hasName(e, 'NotFoundError');
export const isCapabilityError = (e: unknown): e is CapabilityError => hasName(e, 'CapabilityError');
export const isExpressionLimitError = (e: unknown): e is ExpressionLimitError => hasName(e, 'ExpressionLimitError');
export const isEventTooLargeError = (e: unknown): e is EventTooLargeError => hasName(e, 'EventTooLargeError');
export const isPayloadTooLargeError = (e: unknown): e is PayloadTooLargeError => hasName(e, 'PayloadTooLargeError');
export const isAdmissionConflictError = (e: unknown): e is AdmissionConflictError =>
  hasName(e, 'AdmissionConflictError');
export const isStreamRecordsExpiredError = (e: unknown): e is StreamRecordsExpiredError =>
  hasName(e, 'StreamRecordsExpiredError');

/** Whether a failure may succeed on a later attempt; unknown errors are treated as transient. */
export const isRetryable = (error: unknown): boolean => (isCairnError(error) ? error.retryable : true);

/**
 * The AWS SDK's "try again" (a throttle, a call that got no answer, a service error), once its own retries are
 * spent: the platform failed, not the work, and a repeat of an idempotent action settles it.
 */
const TRANSIENT_PLATFORM_NAMES: ReadonlySet<string> = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TimeoutError',
  'InternalServerError',
  'ServiceUnavailable',
]);

export function isTransientPlatformError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || isCairnError(error)) return false;
  const { name, $retryable } = error as { name?: unknown; $retryable?: unknown };
  return (
    (typeof name === 'string' && TRANSIENT_PLATFORM_NAMES.has(name)) ||
    ($retryable !== undefined && $retryable !== null)
  );
}
