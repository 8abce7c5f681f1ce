/**
 * Where an OpenAI-compatible endpoint's key comes from: the key itself (CAIRN_MODEL_API_KEY, npm start), the
 * environment variable a binding names (`apiKeyEnv`), or a Secrets Manager secret (`apiKeySecret`, deployed), read
 * when the first request needs it and again after a few minutes, so a rotated key is picked up. No source: none
 * (local servers need no key).
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Env } from '../../config/settings.ts';
import { CairnError, ValidationError } from '../../errors.ts';
import { secretsManagerClient } from '../aws/clients.ts';

export interface ApiKeySource {
  readonly apiKey?: string | undefined;
  readonly apiKeyEnv?: string | undefined;
  readonly apiKeySecret?: string | undefined;
}

export interface ApiKeyDeps {
  /** Default: the process environment. */
  readonly env?: Env;
  readonly secretsClient?: () => SecretsManagerClient;
  /** Epoch milliseconds; tests pass their own. */
  readonly now?: () => number;
}

export const API_KEY_CACHE_MS = 300_000;

/** The secret's string, or the `apiKey` field of a JSON object (the shape a secret with several fields takes). */
export function apiKeyFromSecretValue(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (value.trimStart().startsWith('{')) {
    try {
      const parsed = JSON.parse(value) as { apiKey?: unknown };
      return typeof parsed.apiKey === 'string' && parsed.apiKey !== '' ? parsed.apiKey : undefined;
    } catch {
      // Not JSON after all: the whole string is the key.
    }
  }
  return value.trim();
}

function secretKey(secretId: string, deps: ApiKeyDeps): () => Promise<string> {
  const now = deps.now ?? Date.now;
  let client: SecretsManagerClient | undefined;
  let cached: { readonly until: number; readonly key: Promise<string> } | undefined;
  const read = async (): Promise<string> => {
    client ??= deps.secretsClient?.() ?? secretsManagerClient();
    let value: string | undefined;
    try {
      const answer = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
      value = answer.SecretString;
    } catch (error) {
      throw new CairnError('ModelApiKeyError', `cannot read the model API key secret ${secretId}`, {
        retryable: true,
        cause: error,
        context: { secretId },
      });
    }
    const key = apiKeyFromSecretValue(value);
    if (key === undefined)
      throw new CairnError('ModelApiKeyError', `the secret ${secretId} holds no API key`, { context: { secretId } });
    return key;
  };
  return () => {
    const at = now();
    if (cached === undefined || cached.until <= at) {
      const key = read();
      cached = { until: at + API_KEY_CACHE_MS, key };
      // A failed read is not kept: the next request asks again.
      key.catch(() => {
        if (cached?.key === key) cached = undefined;
      });
    }
    return cached.key;
  };
}

/** The key to give the client: a string, a reader of the secret, or undefined for none. */
export function apiKeyOf(source: ApiKeySource, deps: ApiKeyDeps = {}): string | (() => Promise<string>) | undefined {
  if (source.apiKey !== undefined) return source.apiKey;
  if (source.apiKeySecret !== undefined) return secretKey(source.apiKeySecret, deps);
  if (source.apiKeyEnv === undefined) return undefined;
  const env = deps.env ?? process.env;
  const key = env[source.apiKeyEnv];
  if (key === undefined || key.trim() === '') {
    const message = `the model API key variable ${source.apiKeyEnv} (apiKeyEnv) is not set`;
    throw new ValidationError(message, [{ code: 'E_BINDINGS_CONFIG', path: '/apiKeyEnv', message }]);
  }
  return key.trim();
}
