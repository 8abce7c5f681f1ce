/**
 * What `POST /webhooks/{source}` needs from its deployment: the per-source signing secrets and a memory of the
 * deliveries already accepted (replay protection inside the timestamp window).
 */

/** The signing secret of a source; undefined when the source has none (the webhook answers 401, like a bad one). */
export type WebhookSecretLookup = (source: string) => Promise<string | undefined>;

export interface WebhookReplayGuard {
  /**
   * Remembers `key` until `expiresAt` (epoch seconds). True for the first caller to present it before then; false
   * for every later one (a replayed or concurrently duplicated delivery).
   */
  firstSeen(key: string, expiresAt: number): Promise<boolean>;
  /** Forgets a key whose delivery could not be published, so the sender's retry is accepted rather than dropped. */
  release?(key: string): Promise<void>;
}

export interface WebhookConfig {
  readonly secrets: WebhookSecretLookup;
  /** How far `X-Cairn-Timestamp` may be from the server clock, either way (seconds; default 300). */
  readonly replayWindowSeconds?: number;
  readonly replayGuard: WebhookReplayGuard;
}

export const DEFAULT_REPLAY_WINDOW_SECONDS = 300;
/** A window longer than a day would make the replay memory (and a leaked signature) live too long. */
export const MAX_REPLAY_WINDOW_SECONDS = 86_400;

/** CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS, or the default; anything but an integer in 1..86400 fails the start loudly. */
export function replayWindowFromEnv(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS;
  if (raw === undefined || raw === '') return DEFAULT_REPLAY_WINDOW_SECONDS;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > MAX_REPLAY_WINDOW_SECONDS) {
    throw new Error(`CAIRN_WEBHOOK_REPLAY_WINDOW_SECONDS must be an integer in 1..${MAX_REPLAY_WINDOW_SECONDS}`);
  }
  return value;
}
