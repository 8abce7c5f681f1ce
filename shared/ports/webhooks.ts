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
  /** How far a delivery's timestamp may be from the server clock, either way (seconds; DEFAULT_REPLAY_WINDOW_SECONDS). */
  readonly replayWindowSeconds?: number;
  readonly replayGuard: WebhookReplayGuard;
  /**
   * Whose resources a source reports (absent, or undefined for the source: the default tenant's): its changes
   * invalidate only that tenant's runs.
   */
  readonly tenants?: ReadonlyMap<string, string>;
}
