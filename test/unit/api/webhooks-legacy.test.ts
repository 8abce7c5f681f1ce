/**
 * cairn's earlier headers, `X-Cairn-Timestamp` + `X-Cairn-Signature: sha256=<hex>`: accepted only when the signature
 * covers `<timestamp>.<body>`. A signature of the body alone is refused: it does not sign the timestamp, so a captured
 * delivery could be sent again with a fresh timestamp for ever.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signLegacy, sourceKey } from '../../../shared/webhooks/signature.ts';
import { fixture, OTHER_SECRET, SECRET, SOURCE, webhookHarness } from './webhook-support.ts';

const bodyOnlyHeaders = (body: Uint8Array, timestamp: number, secret = SECRET) => ({
  'X-Cairn-Timestamp': String(timestamp),
  'X-Cairn-Signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

describe('POST /webhooks/{source} with X-Cairn-* headers', () => {
  it('accepts a signature of "<timestamp>.<body>" and publishes the change', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const response = await w.post(SOURCE, body, { ...signLegacy(sourceKey(SECRET), body, w.now()) });

    expect(response.status).toBe(202);
    expect(w.events.published).toHaveLength(1);
  });

  it('verifies the openssl-signed fixture delivery', async () => {
    const vector = JSON.parse(new TextDecoder().decode(fixture('signed-delivery.json'))) as Record<string, string>;
    const w = await webhookHarness({
      webhooks: { secrets: async (source) => (source === vector.source ? vector.secret : undefined) },
    });
    w.setNow(Number(vector.timestamp));

    const response = await w.post(vector.source ?? '', vector.body ?? '', {
      'X-Cairn-Timestamp': vector.timestamp ?? '',
      'X-Cairn-Signature': vector.signature ?? '',
    });

    expect(response.status).toBe(202);
    expect(w.events.published).toHaveLength(1);
  });

  it('refuses a signature of the body alone, with the same 401 as a bad signature', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const bodyOnly = await w.post(SOURCE, body, bodyOnlyHeaders(body, w.now()));
    const wrong = await w.post(SOURCE, body, bodyOnlyHeaders(body, w.now(), OTHER_SECRET));

    expect([bodyOnly.status, wrong.status]).toEqual([401, 401]);
    expect(await bodyOnly.text()).toBe(await wrong.text());
    expect(w.events.published).toHaveLength(0);
  });

  it('answers a replayed X-Cairn delivery as a duplicate and refuses it once stale', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');
    const headers = { ...signLegacy(sourceKey(SECRET), body, w.now()) };

    const first = await w.post(SOURCE, body, headers);
    const replay = await w.post(SOURCE, body, headers);
    w.setNow(w.now() + 301);
    const stale = await w.post(SOURCE, body, headers);

    expect([first.status, replay.status, stale.status]).toEqual([202, 200, 401]);
    expect(w.events.published).toHaveLength(1);
  });
});
