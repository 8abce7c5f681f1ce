/**
 * The documented signature form: `sha256=<hex HMAC-SHA256 of the raw body>`, with the timestamp header checked
 * against the window but not signed. Its replay memory outlives the window, since the header could be refreshed.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhookBody } from '../../../shared/api/webhook-signature.ts';
import { BODY_ONLY_REPLAY_MEMORY_SECONDS } from '../../../shared/api/webhooks.ts';
import { fixture, OTHER_SECRET, SECRET, SOURCE, webhookHarness } from './webhook-support.ts';

const bodyOnlyHeaders = (body: Uint8Array, timestamp: number, secret = SECRET) => ({
  'X-Cairn-Timestamp': String(timestamp),
  'X-Cairn-Signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

describe('POST /webhooks/{source} signed over the raw body alone', () => {
  it('accepts a signature computed exactly as documented and publishes the change', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const response = await w.post(SOURCE, body, bodyOnlyHeaders(body, w.now()));

    expect(response.status).toBe(202);
    expect(w.events.published).toHaveLength(1);
  });

  it('produces the same headers from signWebhookBody as from a plain HMAC of the body', () => {
    const body = fixture('one-key.json');
    expect(signWebhookBody(SECRET, body, 1_700_000_000)).toEqual(bodyOnlyHeaders(body, 1_700_000_000));
  });

  it('refuses a body-only signature made with another secret', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const response = await w.post(SOURCE, body, bodyOnlyHeaders(body, w.now(), OTHER_SECRET));

    expect(response.status).toBe(401);
    expect(w.events.published).toHaveLength(0);
  });

  it('refuses a body-only delivery whose timestamp is outside the window', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const response = await w.post(SOURCE, body, bodyOnlyHeaders(body, w.now() - 3_600));

    expect(response.status).toBe(401);
    expect(w.events.published).toHaveLength(0);
  });

  it('answers a replay with a refreshed timestamp as a duplicate and publishes nothing more', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');
    await w.post(SOURCE, body, bodyOnlyHeaders(body, w.now()));
    w.setNow(w.now() + 3_600);

    const replay = await w.post(SOURCE, body, bodyOnlyHeaders(body, w.now()));

    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ duplicate: true });
    expect(w.events.published).toHaveLength(1);
  });

  it('accepts the same body again once the body-only replay memory has passed', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');
    await w.post(SOURCE, body, bodyOnlyHeaders(body, w.now()));
    w.setNow(w.now() + BODY_ONLY_REPLAY_MEMORY_SECONDS + 10);

    const later = await w.post(SOURCE, body, bodyOnlyHeaders(body, w.now()));

    expect(later.status).toBe(202);
    expect(w.events.published).toHaveLength(2);
  });
});
