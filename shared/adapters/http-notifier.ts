/**
 * Sends approval notifications as Standard Webhooks (shared/webhooks/signature.ts): one signed JSON POST per
 * receiver, `webhook-id` the notification's id (the same on every try, so a receiver takes it once), a fresh
 * `webhook-timestamp` and signature on each try. The one owner of retries for a notification: a network error, a
 * timeout, 408, 429 and 5xx are tried again with full-jitter exponential backoff (a 429's or 503's Retry-After is
 * honoured, within the cap); any other answer but 2xx is final. What still fails is a NotificationDeliveryError.
 */
import type { NotificationSender, OutgoingNotification } from '../ports/notifications.ts';
import { NotificationDeliveryError } from '../webhooks/errors.ts';
import { signStandard, standardKey } from '../webhooks/signature.ts';

export interface HttpNotificationSenderOptions {
  readonly urls: readonly string[];
  /** A Standard Webhooks secret (`whsec_<base64>`, the prefix optional), or where to read it (cached by the caller). */
  readonly secret: string | (() => Promise<string>);
  /** Tries per receiver, the first included (default 5). */
  readonly attempts?: number;
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Per try (default 10 s). */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
  readonly clock?: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

/** The pause before try `attempt + 1` (full jitter), or the answer's Retry-After when it asks for one. */
export function backoffMs(
  attempt: number,
  options: { baseDelayMs: number; maxDelayMs: number; random: () => number; retryAfter?: string | null },
): number {
  const asked = options.retryAfter == null ? Number.NaN : Number(options.retryAfter) * 1000;
  if (Number.isFinite(asked) && asked >= 0) return Math.min(asked, options.maxDelayMs);
  return Math.floor(options.random() * Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt));
}

export function createHttpNotificationSender(options: HttpNotificationSenderOptions): NotificationSender {
  const attempts = Math.max(1, options.attempts ?? 5);
  const timing = {
    baseDelayMs: options.baseDelayMs ?? 500,
    maxDelayMs: options.maxDelayMs ?? 30_000,
    random: options.random ?? Math.random,
  };
  const timeoutMs = options.timeoutMs ?? 10_000;
  const doFetch = options.fetch ?? fetch;
  const clock = options.clock ?? (() => new Date());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const secretOf = typeof options.secret === 'string' ? async () => options.secret as string : options.secret;

  async function deliver(url: string, key: Buffer, notification: OutgoingNotification, body: Uint8Array) {
    let last: LastTry = {};
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await sleep(backoffMs(attempt - 1, { ...timing, retryAfter: last.retryAfter }));
      const timestamp = Math.floor(clock().getTime() / 1000);
      const headers = signStandard(key, { id: notification.id, timestamp, body });
      let answer: Response;
      try {
        answer = await doFetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'cairn-notifier', ...headers },
          body,
          redirect: 'error',
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        last = { error };
        continue;
      }
      await answer.body?.cancel().catch(() => undefined);
      if (answer.ok) return;
      last = { status: answer.status, retryAfter: answer.headers.get('retry-after') };
      if (!RETRYABLE_STATUS.has(answer.status)) return fail(url, attempt + 1, last, false);
    }
    return fail(url, attempts, last, true);
  }

  return {
    async send(notification) {
      const key = standardKey(await secretOf());
      const body = new TextEncoder().encode(JSON.stringify(notification.body));
      const results = await Promise.allSettled(options.urls.map((url) => deliver(url, key, notification, body)));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

interface LastTry {
  readonly status?: number;
  readonly error?: unknown;
  readonly retryAfter?: string | null;
}

function fail(url: string, attempts: number, last: LastTry, retryable: boolean): never {
  // The URL's origin only: a receiver's path may hold a token (Slack's incoming webhooks do).
  const origin = URL.canParse(url) ? new URL(url).origin : 'the receiver';
  const why = last.status === undefined ? `no answer (${String(last.error)})` : `HTTP ${last.status}`;
  throw new NotificationDeliveryError(
    `${origin} did not take the notification after ${attempts} ${attempts === 1 ? 'try' : 'tries'}: ${why}`,
    { ...(last.status === undefined ? {} : { status: last.status }), attempts, url: origin },
    { retryable, ...(last.error === undefined ? {} : { cause: last.error }) },
  );
}
