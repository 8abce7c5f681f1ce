import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BusEnvelope } from '../../../shared/adapters/local/event-bus.ts';
import { createLocalEventBus } from '../../../shared/adapters/local/event-bus.ts';
import { createApp } from '../../../shared/api/app.ts';
import { deliveryIdOf, MAX_WEBHOOK_BODY_BYTES } from '../../../shared/api/webhooks.ts';
import { BUS_RULES } from '../../../shared/events/bus-rules.ts';
import { parseEventDetail } from '../../../shared/events/catalog.ts';
import { signWebhook } from '../../../shared/webhooks/signature.ts';
import { TOKEN } from './harness.ts';
import {
  bytes,
  fixture,
  OTHER_SECRET,
  SECRET,
  SOURCE,
  type WebhookHarness,
  webhookHarness,
} from './webhook-support.ts';

const ONE_KEY = 's3://acme-data/prices/2030-01.csv';
const REFUSAL = { error: { code: 'E_UNAUTHORIZED', message: 'invalid signature' } };

afterEach(() => {
  vi.restoreAllMocks();
});

const ID = 'msg_2bqYxKUtQ4nOTr8RkzLhWg';
const headersOf = (body: Uint8Array, timestamp: number, options: { secret?: string; id?: string } = {}) => ({
  ...signWebhook(options.secret ?? SECRET, body, timestamp, options.id ?? ID),
});

describe('POST /webhooks/{source} with a valid signature', () => {
  it('publishes one ResourceChanged and answers 202 with the key', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const response = await w.signed(body, { id: ID });

    expect(response.status).toBe(202);
    const deliveryId = deliveryIdOf(SOURCE, `id:${ID}`);
    expect(await response.json()).toEqual({ accepted: true, resourceKeys: [ONE_KEY], deliveryId });
    expect(w.events.published).toEqual([
      { detailType: 'ResourceChanged', detail: { resourceKey: ONE_KEY, source: SOURCE, deliveryId } },
    ]);
    expect(parseEventDetail('ResourceChanged', w.events.published[0]?.detail).ok).toBe(true);
  });

  it('publishes one event per distinct key, in the order given', async () => {
    const w = await webhookHarness();

    const response = await w.signed(fixture('many-keys.json'));

    const keys = ['repo:acme/web@main', ONE_KEY, 'doc:handbook/pricing'];
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ accepted: true, resourceKeys: keys });
    expect(w.events.published.map((e) => e.detail.resourceKey)).toEqual(keys);
    expect(new Set(w.events.published.map((e) => e.detail.deliveryId)).size).toBe(1);
  });

  it('routes the events to the invalidator rule on the local bus', async () => {
    const bus = createLocalEventBus();
    const rule = BUS_RULES.find((r) => r.target === 'Invalidator');
    if (!rule) throw new Error('no invalidator rule');
    const received: BusEnvelope[] = [];
    bus.subscribe(rule.pattern, (event) => {
      received.push(event);
    });
    const w = await webhookHarness({ events: bus });

    const response = await w.signed(fixture('many-keys.json'));
    await bus.drain();

    expect(response.status).toBe(202);
    expect(received.map((e) => [e['detail-type'], e.source, e.detail.resourceKey])).toEqual([
      ['ResourceChanged', 'cairn', 'repo:acme/web@main'],
      ['ResourceChanged', 'cairn', ONE_KEY],
      ['ResourceChanged', 'cairn', 'doc:handbook/pricing'],
    ]);
  });

  it('needs no bearer token while every other route still does', async () => {
    const w = await webhookHarness();
    const app = createApp(w.deps);
    const body = fixture('one-key.json');

    const webhook = await w.signed(body);
    const run = await app.request('/runs/run-1');
    const runWithToken = await app.request('/runs/run-1', { headers: { authorization: `Bearer ${TOKEN}` } });

    expect(webhook.status).toBe(202);
    expect(run.status).toBe(401);
    expect(((await run.json()) as typeof REFUSAL).error.message).not.toBe(REFUSAL.error.message);
    expect(runWithToken.status).toBe(404);
  });

  it('accepts timestamps up to the configured window either way, and not one second more', async () => {
    const w = await webhookHarness({ webhooks: { replayWindowSeconds: 60 } });
    const body = fixture('one-key.json');

    const oldest = await w.signed(body, { timestamp: w.now() - 60 });
    const newest = await w.signed(body, { timestamp: w.now() + 60 });
    const tooOld = await w.signed(body, { timestamp: w.now() - 61 });
    const tooNew = await w.signed(body, { timestamp: w.now() + 61 });

    expect([oldest.status, newest.status, tooOld.status, tooNew.status]).toEqual([202, 202, 401, 401]);
    expect(w.events.published).toHaveLength(2);
  });

  it("accepts the specification's published example when its body is a change notice", async () => {
    const vector = JSON.parse(new TextDecoder().decode(fixture('standard-vector.json'))) as Record<string, string>;
    const w = await webhookHarness({ webhooks: { secrets: async () => vector.secret } });
    w.setNow(Number(vector.timestamp));

    // The vector's own body is not a change notice: 400 after the signature passed (401 would mean it failed).
    const response = await w.post(SOURCE, vector.body ?? '', {
      'webhook-id': vector.id ?? '',
      'webhook-timestamp': vector.timestamp ?? '',
      'webhook-signature': vector.signature ?? '',
    });

    expect(response.status).toBe(400);
    expect(w.events.published).toHaveLength(0);
  });

  it('accepts any one matching signature among several (a sender rotating its secret)', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');
    const good = headersOf(body, w.now());
    const old = headersOf(body, w.now(), { secret: OTHER_SECRET });

    const response = await w.post(SOURCE, body, {
      ...good,
      'webhook-signature': `v1a,ZmFrZQ== ${old['webhook-signature']} ${good['webhook-signature']}`,
    });

    expect(response.status).toBe(202);
  });
});

describe('POST /webhooks/{source} refusals', () => {
  const body = fixture('one-key.json');
  type Case = [string, (w: WebhookHarness) => Promise<Response>];
  const cases: Case[] = [
    ['a wrong signature', (w) => w.post(SOURCE, body, headersOf(body, w.now(), { secret: OTHER_SECRET }))],
    ['the signature of another body', (w) => w.post(SOURCE, body, headersOf(fixture('many-keys.json'), w.now()))],
    ['no signature header', (w) => w.post(SOURCE, body, { 'webhook-id': ID, 'webhook-timestamp': String(w.now()) })],
    [
      'another signature version only',
      (w) => {
        const h = headersOf(body, w.now());
        return w.post(SOURCE, body, { ...h, 'webhook-signature': h['webhook-signature'].replace('v1,', 'v2,') });
      },
    ],
    [
      'a bare base64 signature',
      (w) => {
        const h = headersOf(body, w.now());
        return w.post(SOURCE, body, { ...h, 'webhook-signature': h['webhook-signature'].slice(3) });
      },
    ],
    [
      'a truncated signature (length mismatch)',
      (w) => {
        const h = headersOf(body, w.now());
        return w.post(SOURCE, body, { ...h, 'webhook-signature': h['webhook-signature'].slice(0, 20) });
      },
    ],
    [
      'another message id than the one signed',
      (w) => w.post(SOURCE, body, { ...headersOf(body, w.now()), 'webhook-id': 'msg_other' }),
    ],
    [
      'no message id',
      (w) => {
        const { 'webhook-id': _id, ...h } = headersOf(body, w.now(), { id: '' });
        return w.post(SOURCE, body, h);
      },
    ],
    ['an unknown source', (w) => w.signed(body, { source: 'payroll' })],
    ['a source name no secret can have', (w) => w.signed(body, { source: '..%2Fprices' })],
    ['a stale timestamp', (w) => w.signed(body, { timestamp: w.now() - 301 })],
    ['a timestamp too far in the future', (w) => w.signed(body, { timestamp: w.now() + 301 })],
    [
      'no timestamp header',
      (w) => {
        const { 'webhook-timestamp': _t, ...h } = headersOf(body, w.now());
        return w.post(SOURCE, body, h);
      },
    ],
    [
      'a garbled timestamp',
      (w) => w.post(SOURCE, body, { ...headersOf(body, w.now()), 'webhook-timestamp': `${w.now()}abc` }),
    ],
    [
      'a fresh timestamp on an old signature (the timestamp is signed too)',
      (w) => w.post(SOURCE, body, { ...headersOf(body, w.now() - 3600), 'webhook-timestamp': String(w.now()) }),
    ],
  ];

  it.each(cases)('answers 401 to %s and publishes nothing', async (_name, send) => {
    const w = await webhookHarness();

    const response = await send(w);

    expect(response.status).toBe(401);
    expect(await response.text()).toBe(JSON.stringify(REFUSAL));
    expect(response.headers.get('www-authenticate')).toBeNull();
    expect(w.events.published).toEqual([]);
  });

  it('refuses every delivery the same way when no webhooks are configured', async () => {
    const w = await webhookHarness({ webhooks: null });

    const response = await w.signed(body);

    expect(response.status).toBe(401);
    expect(await response.text()).toBe(JSON.stringify(REFUSAL));
    expect(w.events.published).toEqual([]);
  });

  it('does not remember refused deliveries: the valid one after them is accepted', async () => {
    const w = await webhookHarness();
    const good = headersOf(body, w.now());
    await w.post(SOURCE, fixture('many-keys.json'), { ...good });

    const response = await w.post(SOURCE, body, { ...good });

    expect(response.status).toBe(202);
  });

  it('refuses a signed body that is not JSON with 400 only after the signature passed', async () => {
    const w = await webhookHarness();
    const notJson = fixture('not-json.txt');

    const signed = await w.signed(notJson);
    const unsigned = await w.signed(notJson, { secret: OTHER_SECRET });

    expect(signed.status).toBe(400);
    expect(((await signed.json()) as typeof REFUSAL).error.code).toBe('E_BAD_REQUEST');
    expect(unsigned.status).toBe(401);
    expect(w.events.published).toEqual([]);
  });

  it.each([
    ['both forms at once', fixture('both-forms.json')],
    ['an empty key list', fixture('no-keys.json')],
    ['an unknown field', fixture('extra-field.json')],
    ['101 keys', bytes(JSON.stringify({ resourceKeys: Array.from({ length: 101 }, (_, i) => `k${i}`) }))],
    ['a key of 513 characters', bytes(JSON.stringify({ resourceKey: 'k'.repeat(513) }))],
    ['an empty key', bytes(JSON.stringify({ resourceKey: '' }))],
    ['a duplicate JSON key', bytes('{"resourceKey":"a","resourceKey":"b"}')],
    ['bytes that are not UTF-8', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])],
  ])('answers 400 to a signed body with %s and publishes nothing', async (_name, payload) => {
    const w = await webhookHarness();

    const response = await w.signed(payload);

    expect(response.status).toBe(400);
    expect(w.events.published).toEqual([]);
  });

  it('accepts 100 keys of 512 characters', async () => {
    const w = await webhookHarness();
    const keys = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(512, 'k'));

    const response = await w.signed(JSON.stringify({ resourceKeys: keys }));

    expect(response.status).toBe(202);
    expect(w.events.published).toHaveLength(100);
  });

  it('answers 413 to a body over the limit, signed or not, and publishes nothing', async () => {
    const w = await webhookHarness();
    const big = bytes(JSON.stringify({ resourceKey: 'k', pad: 'x'.repeat(MAX_WEBHOOK_BODY_BYTES) }));

    const response = await w.signed(big);

    expect(response.status).toBe(413);
    expect(w.events.published).toEqual([]);
  });

  it('answers 413 to a streamed body without a length once it passes the limit', async () => {
    const w = await webhookHarness({ extra: {} });
    const app = createApp(w.deps);
    const chunk = new Uint8Array(64 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > MAX_WEBHOOK_BODY_BYTES) controller.close();
        else controller.enqueue(chunk);
        sent += chunk.length;
      },
    });

    const response = await app.request(`/webhooks/${SOURCE}`, {
      method: 'POST',
      body: stream,
      headers: { 'transfer-encoding': 'chunked' },
      duplex: 'half',
    } as RequestInit);

    expect(response.status).toBe(413);
    expect(w.events.published).toEqual([]);
  });
});

describe('POST /webhooks/{source} replays', () => {
  it('acknowledges a replayed delivery with 200 duplicate and publishes nothing more', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');
    const headers = headersOf(body, w.now());

    const first = await w.post(SOURCE, body, headers);
    w.setNow(w.now() + 120);
    const replay = await w.post(SOURCE, body, headers);

    expect(first.status).toBe(202);
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ accepted: true, duplicate: true });
    expect(w.events.published).toHaveLength(1);
  });

  it('counts two copies racing as one delivery', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');
    const headers = headersOf(body, w.now());

    const answers = await Promise.all([w.post(SOURCE, body, headers), w.post(SOURCE, body, headers)]);

    expect(answers.map((a) => a.status).sort()).toEqual([200, 202]);
    expect(w.events.published).toHaveLength(1);
  });

  it('refuses a message id seen before, even signed again at another time', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const first = await w.signed(body, { id: ID, timestamp: w.now() - 10 });
    const again = await w.signed(body, { id: ID });

    expect([first.status, again.status]).toEqual([202, 200]);
    expect(await again.json()).toMatchObject({ duplicate: true, deliveryId: deliveryIdOf(SOURCE, `id:${ID}`) });
    expect(w.events.published).toHaveLength(1);
  });

  it('refuses the replay as stale once the window has passed and the memory forgot it', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');
    const headers = headersOf(body, w.now());
    await w.post(SOURCE, body, headers);
    w.setNow(w.now() + 302);

    const replay = await w.post(SOURCE, body, headers);

    expect(replay.status).toBe(401);
    expect(w.events.published).toHaveLength(1);
  });

  it('takes the same body under another message id as a new delivery', async () => {
    const w = await webhookHarness();
    const body = fixture('one-key.json');

    const first = await w.signed(body, { id: 'msg_one' });
    const second = await w.signed(body, { id: 'msg_two' });

    expect([first.status, second.status]).toEqual([202, 202]);
    const ids = w.events.published.map((e) => e.detail.deliveryId);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('answers 500 when publishing fails and accepts the sender retrying the same delivery', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const w = await webhookHarness();
    w.events.failNext = 1;
    const body = fixture('one-key.json');
    const headers = headersOf(body, w.now());

    const failed = await w.post(SOURCE, body, headers);
    const retried = await w.post(SOURCE, body, headers);

    expect(failed.status).toBe(500);
    expect(retried.status).toBe(202);
    expect(w.events.published).toHaveLength(1);
  });

  it('answers 500, not 401, when the secrets cannot be read for an unknown reason', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const w = await webhookHarness({
      webhooks: {
        secrets: async () => {
          throw new Error('throttled');
        },
      },
    });

    const response = await w.signed(fixture('one-key.json'));

    expect(response.status).toBe(500);
    expect(w.events.published).toEqual([]);
  });
});

describe('webhook configuration', () => {
  it('refuses to build an app with webhooks but no event publisher', async () => {
    const w = await webhookHarness();
    const { events: _events, ...withoutEvents } = w.deps;

    expect(() => createApp(withoutEvents)).toThrow(/event publisher/);
  });

  it.each([0, -1, 1.5, 86_401])('refuses a replay window of %s seconds', async (replayWindowSeconds) => {
    await expect(webhookHarness({ webhooks: { replayWindowSeconds } })).rejects.toThrow(/replayWindowSeconds/);
  });
});
