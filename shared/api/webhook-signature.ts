/**
 * Webhook signatures: `X-Cairn-Signature: sha256=<hex HMAC-SHA256>` with the source's secret, plus an
 * `X-Cairn-Timestamp` header (Unix seconds) inside the replay window. Two signed forms are accepted:
 * - the documented contract, an HMAC of the raw body alone;
 * - the recommended form, an HMAC of `<X-Cairn-Timestamp>.<raw body>`, which binds the timestamp to the body.
 * With the body-only form the timestamp header is not signed, so a captured delivery could be resent with a fresh
 * timestamp: the replay memory of a body-only signature therefore lasts a day rather than the window.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Cairn-Signature';
export const TIMESTAMP_HEADER = 'X-Cairn-Timestamp';
const SCHEME = 'sha256=';
const DIGEST_BYTES = 32;

const SIGNATURE_PATTERN = /^sha256=([0-9a-fA-F]{64})$/;
const TIMESTAMP_PATTERN = /^\d{1,12}$/;

export type WebhookRejection = 'no-secret' | 'timestamp' | 'signature';

export type WebhookVerification =
  | {
      readonly ok: true;
      readonly timestamp: number;
      /** lower-case hex */
      readonly signature: string;
      /** true when the signature covers the timestamp too (the recommended form). */
      readonly timestampBound: boolean;
    }
  | { readonly ok: false; readonly reason: WebhookRejection };

export interface WebhookVerifyInput {
  readonly secret: string | undefined;
  readonly signatureHeader: string | undefined;
  readonly timestampHeader: string | undefined;
  readonly body: Uint8Array;
  readonly nowSeconds: number;
  readonly windowSeconds: number;
}

export function webhookDigest(secret: string, timestamp: string, body: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(body).digest();
}

/** The documented contract's digest: an HMAC-SHA256 of the raw body alone. */
export function webhookBodyDigest(secret: string, body: Uint8Array): Buffer {
  return createHmac('sha256', secret).update(body).digest();
}

/** The headers of a delivery signed in the documented body-only form. */
export function signWebhookBody(
  secret: string,
  body: Uint8Array,
  timestampSeconds: number,
): { readonly [TIMESTAMP_HEADER]: string; readonly [SIGNATURE_HEADER]: string } {
  return {
    [TIMESTAMP_HEADER]: String(timestampSeconds),
    [SIGNATURE_HEADER]: `${SCHEME}${webhookBodyDigest(secret, body).toString('hex')}`,
  };
}

/** The two headers a sender puts on a delivery of `body` (used by `cairn webhook sign` and the tests). */
export function signWebhook(
  secret: string,
  body: Uint8Array,
  timestampSeconds: number,
): { readonly [TIMESTAMP_HEADER]: string; readonly [SIGNATURE_HEADER]: string } {
  const timestamp = String(timestampSeconds);
  return {
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: `${SCHEME}${webhookDigest(secret, timestamp, body).toString('hex')}`,
  };
}

/**
 * Compares a signature header with the expected digest in constant time: a header of the wrong shape or length is
 * compared against a zero buffer of the right length, so it costs the same and never throws a length mismatch.
 */
export function signatureMatches(expected: Buffer, header: string | undefined): boolean {
  const hex = header === undefined ? undefined : SIGNATURE_PATTERN.exec(header.trim())?.[1];
  const given = hex === undefined ? Buffer.alloc(expected.length) : Buffer.from(hex, 'hex');
  const equal = timingSafeEqual(expected, given.length === expected.length ? given : Buffer.alloc(expected.length));
  return equal && hex !== undefined;
}

/** A key that signs nothing real: a source without a secret still pays for one HMAC, so timing shows no difference. */
const UNKNOWN_SOURCE_KEY = randomBytes(DIGEST_BYTES).toString('hex');

/** Checks secret, timestamp window and signature; the reason is for the server's eyes only (the answer is generic). */
export function verifyWebhook(input: WebhookVerifyInput): WebhookVerification {
  const timestampText = input.timestampHeader?.trim() ?? '';
  const timestampShaped = TIMESTAMP_PATTERN.test(timestampText);
  const key = input.secret ?? UNKNOWN_SOURCE_KEY;
  const expected = webhookDigest(key, timestampText, input.body);
  const expectedBody = webhookBodyDigest(key, input.body);
  // Both comparisons always run, so the time taken does not tell which form (if any) matched.
  const bound = signatureMatches(expected, input.signatureHeader);
  const bodyOnly = signatureMatches(expectedBody, input.signatureHeader);
  const signed = bound || bodyOnly;
  if (input.secret === undefined) return { ok: false, reason: 'no-secret' };
  if (!timestampShaped) return { ok: false, reason: 'timestamp' };
  const timestamp = Number(timestampText);
  if (Math.abs(input.nowSeconds - timestamp) > input.windowSeconds) return { ok: false, reason: 'timestamp' };
  if (!signed) return { ok: false, reason: 'signature' };
  return {
    ok: true,
    timestamp,
    signature: (bound ? expected : expectedBody).toString('hex'),
    timestampBound: bound,
  };
}

/** A stable id of one delivery (source + signature), carried on its events so consumers can tell duplicates. */
export const deliveryIdOf = (source: string, signature: string): string =>
  createHash('sha256').update(`${source}#${signature}`, 'utf8').digest('hex').slice(0, 32);
