/**
 * Webhook signing secrets in AWS Secrets Manager, one secret per source named `<prefix>/<source>` (the prefix from
 * CAIRN_WEBHOOK_SECRET_PREFIX, e.g. `cairn/prod/webhooks`). Answers are cached for a few minutes — found and not
 * found alike — so a burst of deliveries, or of probes for made-up sources, costs one GetSecretValue per source.
 * A rotated secret is picked up within the cache time.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { WebhookSecretLookup } from '../../ports/webhooks.ts';
import { WebhookSecretError } from '../../webhooks/errors.ts';
import { secretsManagerClient } from './clients.ts';

export const DEFAULT_SECRET_CACHE_SECONDS = 300;

/**
 * A deleted, disabled or never created secret: the source has no secret configured. AccessDenied is one too: the
 * function may read `<prefix>/<source>-??????` only, and Secrets Manager answers AccessDenied rather than NotFound
 * for a name it may not know of (an unknown source), so it is the same 401 as a bad signature, never a 500.
 */
const ABSENT_SECRET_ERRORS = new Set(['ResourceNotFoundException', 'InvalidRequestException', 'AccessDeniedException']);

export interface SecretsManagerWebhookSecretsOptions {
  /** Secret name = `<prefix>/<source>` (a trailing slash on the prefix is ignored). */
  readonly prefix: string;
  /** Defaults to a client from the Lambda environment. */
  readonly client?: SecretsManagerClient;
  readonly cacheSeconds?: number;
  /** Epoch milliseconds; tests pass their own. */
  readonly now?: () => number;
  /** The cache holds at most this many sources (oldest dropped first). */
  readonly maxEntries?: number;
}

export const webhookSecretName = (prefix: string, source: string): string => `${prefix.replace(/\/+$/, '')}/${source}`;

/**
 * The secret's string, or a JSON object's `secret` field (`{"secret":"..."}`, the shape a generated secret with a
 * template takes). Empty means none.
 */
export function secretFromValue(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (value.trimStart().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(value);
      if (typeof parsed === 'object' && parsed !== null && 'secret' in parsed) {
        const secret = (parsed as { secret: unknown }).secret;
        return typeof secret === 'string' && secret !== '' ? secret : undefined;
      }
    } catch {
      // Not JSON after all: the whole string is the secret.
    }
  }
  return value;
}

export function createSecretsManagerWebhookSecrets(options: SecretsManagerWebhookSecretsOptions): WebhookSecretLookup {
  const client = options.client ?? secretsManagerClient();
  const cacheMs = (options.cacheSeconds ?? DEFAULT_SECRET_CACHE_SECONDS) * 1000;
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? 256;
  const cache = new Map<string, { readonly until: number; readonly value: Promise<string | undefined> }>();

  const fetchSecret = async (source: string): Promise<string | undefined> => {
    const secretId = webhookSecretName(options.prefix, source);
    try {
      const answer = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
      const text =
        answer.SecretString ??
        (answer.SecretBinary === undefined ? undefined : Buffer.from(answer.SecretBinary).toString('utf8'));
      return secretFromValue(text);
    } catch (error) {
      if (error instanceof Error && ABSENT_SECRET_ERRORS.has(error.name)) return undefined;
      // Throttling or an outage is not "no secret": answering 401 would tell the sender its signature is wrong.
      throw new WebhookSecretError(`cannot read the webhook secret ${secretId}`, {
        cause: error,
        context: { secretId },
      });
    }
  };

  return (source) => {
    const at = now();
    const cached = cache.get(source);
    if (cached && cached.until > at) return cached.value;
    // Concurrent lookups share one call; a failed one is not cached, so the next delivery asks again.
    const entry = { until: at + cacheMs, value: fetchSecret(source) };
    cache.delete(source);
    cache.set(source, entry);
    entry.value.catch(() => {
      if (cache.get(source) === entry) cache.delete(source);
    });
    for (const key of cache.keys()) {
      if (cache.size <= maxEntries) break;
      cache.delete(key);
    }
    return entry.value;
  };
}

/** The secrets under a prefix (Settings.webhooks.secretPrefix); without one no source has a secret, and every delivery is refused. */
export function webhookSecretsFor(prefix: string | undefined, client?: SecretsManagerClient): WebhookSecretLookup {
  if (prefix === undefined || prefix.trim() === '') return async () => undefined;
  return createSecretsManagerWebhookSecrets({ prefix, ...(client ? { client } : {}) });
}
