/**
 * The deployed replay memory of webhook deliveries: the Store's idempotency records (a conditional put; DynamoDB's
 * TTL removes them later). Every API Lambda instance shares it, so a delivery replayed to another instance, or two
 * copies racing, still count once.
 */
import type { Store } from '../../ports/store.ts';
import type { WebhookReplayGuard } from '../../ports/webhooks.ts';

export function createStoreReplayGuard(
  store: Pick<Store, 'beginIdempotent' | 'abortIdempotent'>,
  clock: () => Date = () => new Date(),
): WebhookReplayGuard {
  return {
    async firstSeen(key, expiresAt) {
      const now = Math.floor(clock().getTime() / 1000);
      // The record stays in_progress until it expires: that is what lets `release` drop it after a failed publish.
      return (await store.beginIdempotent(key, expiresAt, now)) === undefined;
    },
    async release(key) {
      await store.abortIdempotent(key);
    },
  };
}
