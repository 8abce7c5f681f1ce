import { describe, expect, it } from 'vitest';
import { backoffMs, createHttpNotificationSender } from '../../../shared/adapters/http-notifier.ts';
import { isNotificationDeliveryError } from '../../../shared/webhooks/errors.ts';
import { verifyWebhook } from '../../../shared/webhooks/signature.ts';
import { startNotifyReceiver } from '../../support/notify-receiver.ts';

const SECRET = 'whsec_MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=';
const notification = { id: 'msg_1', type: 'approval.requested', body: { type: 'approval.requested', text: 'hi' } };

function sender(urls: string[], sleeps: number[] = []) {
  return createHttpNotificationSender({
    urls,
    secret: SECRET,
    attempts: 3,
    baseDelayMs: 100,
    maxDelayMs: 1_000,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
}

describe('backoffMs', () => {
  it('draws a full-jitter delay under an exponential cap, or follows Retry-After within the cap', () => {
    const timing = { baseDelayMs: 100, maxDelayMs: 1_000, random: () => 0.999 };

    expect([0, 1, 2, 5].map((attempt) => backoffMs(attempt, timing))).toEqual([99, 199, 399, 999]);
    expect(backoffMs(0, { ...timing, random: () => 0 })).toBe(0);
    expect(backoffMs(0, { ...timing, retryAfter: '0.5' })).toBe(500);
    expect(backoffMs(0, { ...timing, retryAfter: '3600' })).toBe(1_000);
  });
});

describe('createHttpNotificationSender', () => {
  it('posts the JSON body signed per Standard Webhooks to every receiver', async () => {
    const a = await startNotifyReceiver();
    const b = await startNotifyReceiver();
    try {
      await sender([a.url, b.url]).send(notification);

      for (const r of [...a.received, ...b.received]) {
        const header = (name: string) => r.headers[name] as string | undefined;
        const now = Number(header('webhook-timestamp'));
        expect(verifyWebhook({ secret: SECRET, header, body: r.raw, nowSeconds: now }).replayId).toBe('id:msg_1');
        expect(r.body).toEqual(notification.body);
      }
      expect([a.received.length, b.received.length]).toEqual([1, 1]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('retries a 503 with backoff and keeps the message id', async () => {
    const receiver = await startNotifyReceiver();
    const sleeps: number[] = [];
    try {
      receiver.fail(2, 503);

      await sender([receiver.url], sleeps).send(notification);

      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual(['msg_1']);
      expect(sleeps).toEqual([50, 100]);
    } finally {
      await receiver.close();
    }
  });

  it('gives up at once on a 400, as a permanent NotificationDeliveryError naming only the origin', async () => {
    const receiver = await startNotifyReceiver();
    try {
      receiver.fail(5, 400);

      const error = await sender([`${receiver.url}?token=t0p-secret`])
        .send(notification)
        .catch((e: unknown) => e);

      expect(isNotificationDeliveryError(error) && error.retryable).toBe(false);
      expect(String((error as Error).message)).toMatch(/after 1 try: HTTP 400/);
      expect(String((error as Error).message)).not.toContain('t0p-secret');
    } finally {
      await receiver.close();
    }
  });

  it('fails as retryable after its tries when nobody answers', async () => {
    const error = await sender(['http://127.0.0.1:9/none'])
      .send(notification)
      .catch((e: unknown) => e);

    expect(isNotificationDeliveryError(error) && error.retryable).toBe(true);
    expect(String((error as Error).message)).toMatch(/after 3 tries: no answer/);
  });
});
