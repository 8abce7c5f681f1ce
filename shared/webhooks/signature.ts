/**
 * Signing and verifying webhooks, in and out: the one module both the inbound route (`POST /webhooks/{source}`) and
 * the approval notifier use.
 *
 * The Standard Webhooks specification (standardwebhooks.com):
 * - `webhook-id`: the message's id, the same on every retry of that message;
 * - `webhook-timestamp`: Unix seconds;
 * - `webhook-signature`: `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, several space-separated (a sender
 *   rotating its secret signs with both); any one that matches is enough;
 * - secrets `whsec_<base64>`: the HMAC key is the decoded bytes.
 *
 * cairn's earlier headers stay accepted inbound, only in their timestamp-bound form: `X-Cairn-Timestamp` and
 * `X-Cairn-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`. A signature of the body alone is refused:
 * it does not sign the timestamp, so a captured delivery could be sent again with a fresh one forever.
 *
 * Every comparison is constant-time (timingSafeEqual on buffers of equal length), every signature given is compared
 * (no early exit), and a source without a secret still pays for the same HMACs with a key that signs nothing, so
 * timing tells neither which sources exist nor which signature matched.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { WebhookRejectedError, type WebhookRejection, WebhookSecretFormatError } from './errors.ts';

export const STANDARD_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;
export const LEGACY_HEADERS = { timestamp: 'X-Cairn-Timestamp', signature: 'X-Cairn-Signature' } as const;

/** The specification's tolerance: a timestamp more than 5 minutes from the receiver's clock, either way, is refused. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
export const SECRET_PREFIX = 'whsec_';
/** The specification's key sizes (bytes) for a `whsec_` secret. */
export const MIN_KEY_BYTES = 24;
export const MAX_KEY_BYTES = 64;
/** At most this many signatures in one `webhook-signature` header are looked at (the rest are ignored). */
export const MAX_SIGNATURES = 16;

const DIGEST_BYTES = 32;
const TIMESTAMP_PATTERN = /^\d{1,12}$/;
/** Visible ASCII, no space: the id is part of the signed content and of the replay memory's key. */
const ID_PATTERN = /^[\x21-\x7e]{1,256}$/;
const LEGACY_SIGNATURE_PATTERN = /^sha256=([0-9a-fA-F]{64})$/;
const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/;

function decodeStandardKey(encoded: string, what: string): Buffer {
  const key = BASE64_PATTERN.test(encoded) && encoded.length % 4 === 0 ? Buffer.from(encoded, 'base64') : undefined;
  if (key === undefined) throw new WebhookSecretFormatError(`${what} is not base64 after ${SECRET_PREFIX}`);
  if (key.length < MIN_KEY_BYTES || key.length > MAX_KEY_BYTES)
    throw new WebhookSecretFormatError(
      `${what} holds ${key.length} bytes: a key has ${MIN_KEY_BYTES}..${MAX_KEY_BYTES}`,
    );
  return key;
}

/**
 * The HMAC key of an inbound source's secret: a `whsec_<base64>` secret's decoded bytes; any other secret's UTF-8
 * bytes (cairn's secrets before Standard Webhooks, which senders already use). Throws WebhookSecretFormatError for
 * a `whsec_` secret that is not base64 of 24..64 bytes.
 */
export function sourceKey(secret: string): Buffer {
  return secret.startsWith(SECRET_PREFIX)
    ? decodeStandardKey(secret.slice(SECRET_PREFIX.length), 'the secret')
    : Buffer.from(secret, 'utf8');
}

/**
 * The HMAC key of a Standard Webhooks secret as the specification's libraries read one: `whsec_` optional, the rest
 * base64 (the notifier's secret: a receiver using any of those libraries verifies with the same string).
 */
export function standardKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return decodeStandardKey(encoded, 'the secret');
}

/** A new random `whsec_` secret (32 bytes). */
export const newWebhookSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;

/** A new message id, `msg_` and 22 random base64url characters. */
export const newMessageId = (): string => `msg_${randomBytes(16).toString('base64url')}`;

const hmac = (key: Buffer, parts: readonly (string | Uint8Array)[]): Buffer => {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
};

/** The Standard Webhooks digest of one message. */
export const standardDigest = (key: Buffer, id: string, timestamp: string, body: Uint8Array): Buffer =>
  hmac(key, [`${id}.${timestamp}.`, body]);

/** The headers of a Standard Webhooks message (a `key` from sourceKey or standardKey). */
export function signStandard(
  key: Buffer,
  message: { readonly id: string; readonly timestamp: number; readonly body: Uint8Array },
): { readonly 'webhook-id': string; readonly 'webhook-timestamp': string; readonly 'webhook-signature': string } {
  const timestamp = String(message.timestamp);
  const signature = standardDigest(key, message.id, timestamp, message.body).toString('base64');
  return { 'webhook-id': message.id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}

/** The Standard Webhooks headers of a delivery to a cairn source with `secret` (sourceKey), a new id by default. */
export const signWebhook = (secret: string, body: Uint8Array, timestampSeconds: number, id = newMessageId()) =>
  signStandard(sourceKey(secret), { id, timestamp: timestampSeconds, body });

/** cairn's earlier headers, in the one form still accepted: the HMAC of `<timestamp>.<body>`. */
export function signLegacy(
  key: Buffer,
  body: Uint8Array,
  timestampSeconds: number,
): { readonly 'X-Cairn-Timestamp': string; readonly 'X-Cairn-Signature': string } {
  const timestamp = String(timestampSeconds);
  return {
    'X-Cairn-Timestamp': timestamp,
    'X-Cairn-Signature': `sha256=${hmac(key, [`${timestamp}.`, body]).toString('hex')}`,
  };
}

/** Constant-time equality of a digest and a candidate of any length (a wrong length compares against zeros). */
function equalDigest(expected: Buffer, given: Buffer | undefined): boolean {
  const same = given !== undefined && given.length === expected.length;
  return timingSafeEqual(expected, same ? given : Buffer.alloc(expected.length)) && same;
}

/** Every `v1,<base64>` of a `webhook-signature` header (other versions, e.g. `v1a`, are skipped), decoded. */
function standardSignatures(header: string): Buffer[] {
  return header
    .trim()
    .split(/ +/)
    .slice(0, MAX_SIGNATURES)
    .flatMap((entry) => {
      if (!entry.startsWith('v1,')) return [];
      const encoded = entry.slice(3);
      return BASE64_PATTERN.test(encoded) ? [Buffer.from(encoded, 'base64')] : [Buffer.alloc(0)];
    });
}

/** What a verified delivery is known by: the replay memory keeps `replayId` until `expiresAt`. */
export interface VerifiedDelivery {
  readonly scheme: 'standard' | 'legacy';
  readonly timestamp: number;
  /** `id:<webhook-id>` (Standard Webhooks), or `sig:<hex>` (X-Cairn-*: the signature is the delivery). */
  readonly replayId: string;
}

export interface VerifyInput {
  /** The source's secret; undefined when it has none (refused, after the same work as a known one). */
  readonly secret: string | undefined;
  /** A request header by name (case-insensitive, as Hono's and fetch's are). */
  readonly header: (name: string) => string | undefined;
  readonly body: Uint8Array;
  readonly nowSeconds: number;
  readonly toleranceSeconds?: number;
}

/** A key that signs nothing real, for a source without a secret. */
const UNKNOWN_SOURCE_KEY = randomBytes(DIGEST_BYTES);

const reject = (code: WebhookRejection, message: string): never => {
  throw new WebhookRejectedError(code, message);
};

function checkTimestamp(text: string | undefined, now: number, tolerance: number): number {
  if (text === undefined || !TIMESTAMP_PATTERN.test(text)) return reject('E_WEBHOOK_HEADERS', 'no valid timestamp');
  const timestamp = Number(text);
  if (Math.abs(now - timestamp) > tolerance) reject('E_WEBHOOK_TIMESTAMP', 'the timestamp is outside the tolerance');
  return timestamp;
}

/**
 * Verifies a delivery: Standard Webhooks headers when `webhook-signature` is there, else the timestamp-bound
 * `X-Cairn-*` form. Throws WebhookRejectedError (its code says why, for the server's eyes only).
 */
export function verifyWebhook(input: VerifyInput): VerifiedDelivery {
  const tolerance = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  let key: Buffer;
  try {
    key = input.secret === undefined ? UNKNOWN_SOURCE_KEY : sourceKey(input.secret);
  } catch {
    // A misconfigured secret verifies nothing; to the sender it is a bad signature like any other.
    key = UNKNOWN_SOURCE_KEY;
  }
  const standard = input.header(STANDARD_HEADERS.signature);
  return standard === undefined ? verifyLegacy(input, key, tolerance) : verifyStandard(input, key, standard, tolerance);
}

function verifyStandard(input: VerifyInput, key: Buffer, header: string, tolerance: number): VerifiedDelivery {
  const id = input.header(STANDARD_HEADERS.id)?.trim() ?? '';
  const timestampText = input.header(STANDARD_HEADERS.timestamp)?.trim();
  const expected = standardDigest(key, id, timestampText ?? '', input.body);
  let signed = false;
  for (const given of standardSignatures(header)) signed = equalDigest(expected, given) || signed;
  if (input.secret === undefined || key === UNKNOWN_SOURCE_KEY)
    reject('E_WEBHOOK_UNKNOWN_SOURCE', 'the source has no usable secret');
  if (!ID_PATTERN.test(id)) reject('E_WEBHOOK_HEADERS', `no valid ${STANDARD_HEADERS.id}`);
  const timestamp = checkTimestamp(timestampText, input.nowSeconds, tolerance);
  if (!signed) reject('E_WEBHOOK_SIGNATURE', 'no signature matches');
  return { scheme: 'standard', timestamp, replayId: `id:${id}` };
}

function verifyLegacy(input: VerifyInput, key: Buffer, tolerance: number): VerifiedDelivery {
  const timestampText = input.header(LEGACY_HEADERS.timestamp)?.trim();
  const hex = LEGACY_SIGNATURE_PATTERN.exec(input.header(LEGACY_HEADERS.signature)?.trim() ?? '')?.[1];
  const given = hex === undefined ? undefined : Buffer.from(hex, 'hex');
  const expected = hmac(key, [`${timestampText ?? ''}.`, input.body]);
  // Both always run, so the time taken does not tell which form matched.
  const bound = equalDigest(expected, given);
  const bodyOnly = equalDigest(hmac(key, [input.body]), given);
  if (input.secret === undefined || key === UNKNOWN_SOURCE_KEY)
    reject('E_WEBHOOK_UNKNOWN_SOURCE', 'the source has no usable secret');
  if (given === undefined) reject('E_WEBHOOK_HEADERS', 'no signature headers');
  const timestamp = checkTimestamp(timestampText, input.nowSeconds, tolerance);
  if (bodyOnly && !bound) reject('E_WEBHOOK_BODY_ONLY', 'a signature of the body alone is refused: sign the timestamp');
  if (!bound) reject('E_WEBHOOK_SIGNATURE', 'the signature does not match');
  return { scheme: 'legacy', timestamp, replayId: `sig:${expected.toString('hex')}` };
}
