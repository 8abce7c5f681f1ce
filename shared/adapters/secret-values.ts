/**
 * Reads the values bindings name by reference (shared/capabilities/secret-ref.ts): an environment variable, a file,
 * or a Secrets Manager secret (its string, or a field of its JSON), with the reference's prefix in front. A value is
 * kept SECRET_CACHE_MS after it was read, so a rotated secret is picked up within minutes and a busy step executor
 * asks Secrets Manager a few times an hour, not on every call; a read that failed is not kept.
 *
 * Failures say where the value was looked for, never what it is: a missing variable or file, or a secret that does
 * not exist or may not be read, is a configuration error (not retryable); Secrets Manager throttling or not
 * answering is retryable.
 */
import { readFile } from 'node:fs/promises';
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { CAPABILITY_ERROR_CODES, capabilityError } from '../capabilities/capability-errors.ts';
import {
  describeSecretRef,
  isSecretRef,
  refsIn,
  type SecretRef,
  type SecretValue,
} from '../capabilities/secret-ref.ts';
import type { Env } from '../config/settings.ts';
import { CairnError } from '../errors.ts';
import { secretsManagerClient } from './aws/clients.ts';

export const SECRET_CACHE_MS = 300_000;

/** A referenced value that could not be read. */
export class SecretUnavailableError extends CairnError {
  static readonly code = 'E_SECRET_UNAVAILABLE';
  constructor(message: string, options: { retryable: boolean; cause?: unknown; where: string }) {
    super('SecretUnavailableError', message, {
      retryable: options.retryable,
      ...(options.cause === undefined ? {} : { cause: options.cause }),
      context: { code: SecretUnavailableError.code, where: options.where },
    });
  }
}

export interface SecretResolverDeps {
  /** Default: the process environment. */
  readonly env?: Env;
  readonly readText?: (path: string) => Promise<string>;
  /** Made on the first `secret` reference (clients.ts: with its timeouts). */
  readonly secretsClient?: () => SecretsManagerClient;
  /** Epoch milliseconds; tests pass their own. */
  readonly now?: () => number;
  readonly cacheMs?: number;
}

export interface SecretResolver {
  /** A reference's value, prefix included. */
  resolve(ref: SecretRef): Promise<string>;
  /** Every value of a record, references read (at once), literal values as they are. */
  resolveAll(values: Readonly<Record<string, SecretValue>>): Promise<Record<string, string>>;
}

/** A secret's string as asked: whole, or one field of its JSON object. */
function valueOfSecret(text: string | undefined, ref: Extract<SecretRef, { secret: string }>): string | undefined {
  if (text === undefined) return undefined;
  if (ref.field === undefined) return text;
  try {
    const field = (JSON.parse(text) as Record<string, unknown>)[ref.field];
    return typeof field === 'string' ? field : undefined;
  } catch {
    return undefined;
  }
}

/** Secrets Manager's answers that no retry changes: the secret is missing, or this function may not read it. */
const PERMANENT = new Set([
  'ResourceNotFoundException',
  'AccessDeniedException',
  'DecryptionFailure',
  'InvalidParameterException',
]);

export function createSecretResolver(deps: SecretResolverDeps = {}): SecretResolver {
  const env = deps.env ?? process.env;
  const readText = deps.readText ?? ((path: string) => readFile(path, 'utf8'));
  const now = deps.now ?? Date.now;
  const cacheMs = deps.cacheMs ?? SECRET_CACHE_MS;
  let client: SecretsManagerClient | undefined;
  const cache = new Map<string, { readonly until: number; readonly value: Promise<string> }>();

  const read = async (ref: SecretRef): Promise<string> => {
    const where = describeSecretRef(ref);
    const missing = (why: string, retryable = false, cause?: unknown) =>
      new SecretUnavailableError(`the ${where} ${why}`, { retryable, cause, where });
    if ('env' in ref) {
      const value = env[ref.env];
      if (value === undefined || value === '') throw missing('is not set');
      return value;
    }
    if ('file' in ref) {
      const text = await readText(ref.file).catch((error: unknown) => {
        throw missing(`cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, false, error);
      });
      const value = text.trim();
      if (value === '') throw missing('is empty');
      return value;
    }
    client ??= deps.secretsClient?.() ?? secretsManagerClient();
    let text: string | undefined;
    try {
      text = (await client.send(new GetSecretValueCommand({ SecretId: ref.secret }))).SecretString;
    } catch (error) {
      const name = (error as { name?: unknown }).name;
      const permanent = typeof name === 'string' && PERMANENT.has(name);
      throw missing(`cannot be read (${String(name)})`, !permanent, error);
    }
    const value = valueOfSecret(text, ref);
    if (value === undefined || value === '')
      throw missing(ref.field === undefined ? 'holds no string' : 'has no such string field');
    return value;
  };

  const resolve = (ref: SecretRef): Promise<string> => {
    const { prefix = '', ...where } = ref;
    const key = JSON.stringify(where);
    const at = now();
    let entry = cache.get(key);
    if (entry === undefined || entry.until <= at) {
      const value = read(ref);
      entry = { until: at + cacheMs, value };
      cache.set(key, entry);
      const kept = entry;
      value.catch(() => {
        if (cache.get(key) === kept) cache.delete(key);
      });
    }
    return entry.value.then((value) => `${prefix}${value}`);
  };

  return {
    resolve,
    async resolveAll(values) {
      const entries = await Promise.all(
        Object.entries(values).map(async ([name, value]) => [name, isSecretRef(value) ? await resolve(value) : value]),
      );
      return Object.fromEntries(entries) as Record<string, string>;
    },
  };
}

/** A binding's failure to read what it names: a capability failure (E_SECRET_UNAVAILABLE), retryable as it was. */
export function asCapabilityFailure(error: unknown): never {
  if (error instanceof SecretUnavailableError)
    throw capabilityError(CAPABILITY_ERROR_CODES.secretUnavailable, error.message, {
      retryable: error.retryable,
      cause: error,
      context: error.context,
    });
  throw error;
}

/**
 * A binding's headers (or environment) as its adapter takes them: the record itself when it names nothing by
 * reference, else a reader of its values (each call reads them through the resolver's cache).
 */
export function valuesOf(
  values: Readonly<Record<string, SecretValue>>,
  secrets: () => SecretResolver,
): Readonly<Record<string, string>> | (() => Promise<Record<string, string>>) {
  if (refsIn(values).length === 0) return values as Readonly<Record<string, string>>;
  return () => secrets().resolveAll(values).catch(asCapabilityFailure);
}
