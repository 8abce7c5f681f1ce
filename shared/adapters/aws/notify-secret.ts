/**
 * The deployed notifier's signing secret, read from Secrets Manager (CAIRN_NOTIFY_SECRET_ARN) on first use and
 * kept a few minutes, so a rotation is picked up without a deployment. The value is the secret itself, or
 * `{"secret": "…"}`; CDK's generated one is base64 characters without the `whsec_` prefix, which Standard Webhooks
 * libraries accept as it is (the prefix is optional to them too).
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { WebhookSecretError } from '../../webhooks/errors.ts';
import { secretsManagerClient } from './clients.ts';
import { secretFromValue } from './webhook-secrets.ts';

const CACHE_MS = 300_000;

export function notifySecretReader(
  secretId: string,
  options: { readonly client?: SecretsManagerClient; readonly now?: () => number } = {},
): () => Promise<string> {
  const client = options.client ?? secretsManagerClient();
  const now = options.now ?? Date.now;
  let cached: { readonly until: number; readonly value: Promise<string> } | undefined;
  const read = async (): Promise<string> => {
    const answer = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    const value = secretFromValue(answer.SecretString);
    if (value === undefined)
      throw new WebhookSecretError(`the notification secret ${secretId} is empty`, { retryable: false });
    return value;
  };
  return () => {
    if (cached !== undefined && cached.until > now()) return cached.value;
    const entry = { until: now() + CACHE_MS, value: read() };
    entry.value.catch(() => {
      if (cached === entry) cached = undefined;
    });
    cached = entry;
    return entry.value;
  };
}
