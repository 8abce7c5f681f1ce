/**
 * Webhooks in the embedded stack: secrets from CAIRN_WEBHOOK_SECRETS (a JSON object, source → secret) and a replay
 * memory in process. One process serves the local API, so an in-memory memory sees every delivery.
 */
import {
  replayWindowFromEnv,
  type WebhookConfig,
  type WebhookReplayGuard,
  type WebhookSecretLookup,
} from '../../ports/webhooks.ts';

type Env = Readonly<Record<string, string | undefined>>;

export interface MemoryReplayGuardOptions {
  readonly clock?: () => Date;
  /** Past this many live keys the oldest are forgotten first, so a flood of signed deliveries cannot exhaust memory. */
  readonly maxEntries?: number;
}

export function createMemoryReplayGuard(options: MemoryReplayGuardOptions = {}): WebhookReplayGuard {
  const clock = options.clock ?? (() => new Date());
  const maxEntries = options.maxEntries ?? 100_000;
  const seen = new Map<string, number>();

  // Down to 90% of the cap, so the full scan runs once per many deliveries rather than on each one at the cap.
  const sweep = (now: number): void => {
    const target = Math.floor(maxEntries * 0.9);
    for (const [key, expiresAt] of seen) if (expiresAt < now) seen.delete(key);
    for (const key of seen.keys()) {
      if (seen.size <= target) break;
      seen.delete(key);
    }
  };

  return {
    async firstSeen(key, expiresAt) {
      const now = Math.floor(clock().getTime() / 1000);
      const known = seen.get(key);
      // Same rule as the store's idempotency records: a record that expired before now counts as absent.
      if (known !== undefined && known >= now) return false;
      seen.delete(key);
      seen.set(key, expiresAt);
      if (seen.size > maxEntries) sweep(now);
      return true;
    },
    async release(key) {
      seen.delete(key);
    },
  };
}

/** Parses CAIRN_WEBHOOK_SECRETS; a malformed value fails the start instead of quietly refusing every delivery. */
export function secretsFromJson(text: string | undefined): WebhookSecretLookup {
  const secrets = new Map<string, string>();
  if (text !== undefined && text.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error('CAIRN_WEBHOOK_SECRETS must be a JSON object of source → secret');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('CAIRN_WEBHOOK_SECRETS must be a JSON object of source → secret');
    for (const [source, secret] of Object.entries(parsed)) {
      if (typeof secret !== 'string' || secret === '')
        throw new Error(`CAIRN_WEBHOOK_SECRETS: the secret of "${source}" must be a non-empty string`);
      secrets.set(source, secret);
    }
  }
  return async (source) => secrets.get(source);
}

/** The embedded stack's webhook configuration, from CAIRN_WEBHOOK_SECRETS and CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS. */
export function localWebhooksFromEnv(env: Env, clock?: () => Date): WebhookConfig {
  return {
    secrets: secretsFromJson(env.CAIRN_WEBHOOK_SECRETS),
    replayWindowSeconds: replayWindowFromEnv(env),
    replayGuard: createMemoryReplayGuard(clock ? { clock } : {}),
  };
}
