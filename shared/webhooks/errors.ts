/**
 * The errors of signed webhooks, in and out (shared/errors.ts style: one base class, a stable `name`, a stable
 * `code` in the context, a `retryable` flag). The API answers every inbound refusal with the same 401 whatever its
 * code, so the code is for the server's logs and the tests, never for the sender.
 */
import { CairnError, type CairnErrorOptions } from '../errors.ts';

/** Why an inbound delivery was refused (never told to the sender: the answer is one generic 401). */
export type WebhookRejection =
  /** The source has no secret (unknown, not configured, or not readable by this function). */
  | 'E_WEBHOOK_UNKNOWN_SOURCE'
  /** No signature headers of either family, or a family's header missing or malformed. */
  | 'E_WEBHOOK_HEADERS'
  /** The timestamp is outside the tolerance (either way). */
  | 'E_WEBHOOK_TIMESTAMP'
  /** No signature given matches. */
  | 'E_WEBHOOK_SIGNATURE'
  /** An `X-Cairn-Signature` over the body alone: it does not sign the timestamp, so it could be replayed forever. */
  | 'E_WEBHOOK_BODY_ONLY';

export class WebhookRejectedError extends CairnError {
  readonly code: WebhookRejection;
  constructor(code: WebhookRejection, message: string, options: CairnErrorOptions = {}) {
    super('WebhookRejectedError', message, { ...options, retryable: false, context: { ...options.context, code } });
    this.code = code;
  }
}

/**
 * A secret could not be read for a reason that may pass (throttling, an outage): not "no secret", which would tell
 * the sender its signature is wrong. The API answers 503 so the sender tries again.
 */
export class WebhookSecretError extends CairnError {
  static readonly code = 'E_WEBHOOK_SECRET';
  constructor(message: string, options: CairnErrorOptions = {}) {
    super('WebhookSecretError', message, {
      ...options,
      retryable: options.retryable ?? true,
      context: { ...options.context, code: WebhookSecretError.code },
    });
  }
}

/** A secret that is not a usable signing secret (`whsec_` with bad base64, or a key outside 24..64 bytes). */
export class WebhookSecretFormatError extends CairnError {
  static readonly code = 'E_WEBHOOK_SECRET_FORMAT';
  constructor(message: string) {
    super('WebhookSecretFormatError', message, { retryable: false, context: { code: WebhookSecretFormatError.code } });
  }
}

/**
 * A notification that the receiver did not take: `retryable` when another try may succeed (a network error, a
 * timeout, 408, 429, 5xx); a 4xx otherwise is permanent. `attempts` says how many were made.
 */
export class NotificationDeliveryError extends CairnError {
  static readonly code = 'E_NOTIFY_DELIVERY';
  readonly status: number | undefined;
  constructor(
    message: string,
    details: { readonly status?: number; readonly attempts: number; readonly url: string },
    options: CairnErrorOptions = {},
  ) {
    super('NotificationDeliveryError', message, {
      ...options,
      context: { code: NotificationDeliveryError.code, ...details },
    });
    this.status = details.status;
  }
}

const named = (error: unknown, name: string): boolean =>
  typeof error === 'object' && error !== null && (error as { name?: unknown }).name === name;

export const isWebhookRejectedError = (e: unknown): e is WebhookRejectedError => named(e, 'WebhookRejectedError');
export const isWebhookSecretError = (e: unknown): e is WebhookSecretError => named(e, 'WebhookSecretError');
export const isNotificationDeliveryError = (e: unknown): e is NotificationDeliveryError =>
  named(e, 'NotificationDeliveryError');
