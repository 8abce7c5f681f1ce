/**
 * Webhooks in the embedded stack: secrets from CAIRN_WEBHOOK_SECRETS (a JSON object, source → secret) and, for a
 * stack kept in memory (`--in-memory`), a replay memory in process: one process serves the local API, so it sees
 * every delivery, and nothing outlives the process anyway. A stack on a data directory keeps the memory in its store
 * instead (the deployed guard, infra/local/boot.ts), so a delivery seen before a restart is still a duplicate.
 */
import type { WebhookReplayGuard, WebhookSecretLookup } from '../../ports/webhooks.ts';

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

/** The embedded stack's secrets: Settings.webhooks.secrets (CAIRN_WEBHOOK_SECRETS, checked by the settings parser). */
export function secretsFrom(secrets: ReadonlyMap<string, string>): WebhookSecretLookup {
  return async (source) => secrets.get(source);
}
