import * as crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isWebhookRejectedError, type WebhookRejection } from '../../../shared/webhooks/errors.ts';
import {
  MAX_SIGNATURES,
  signLegacy,
  signStandard,
  sourceKey,
  standardKey,
  verifyWebhook,
} from '../../../shared/webhooks/signature.ts';
import { fixture } from '../api/webhook-support.ts';

// The real timingSafeEqual, observed: every comparison must go through it, on buffers of equal length.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

afterEach(() => {
  vi.mocked(crypto.timingSafeEqual).mockClear();
});

const vector = JSON.parse(new TextDecoder().decode(fixture('standard-vector.json'))) as Record<string, string>;
const text = (s: string) => new TextEncoder().encode(s);
const NOW = 1_893_456_000;
const body = text('{"resourceKey":"k"}');
const SECRET = 'whsec_MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE=';

const headerOf = (headers: Readonly<Record<string, string>>) => (name: string) =>
  Object.entries(headers).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1];

const rejection = (run: () => unknown): WebhookRejection | undefined => {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!isWebhookRejectedError(error)) throw error;
    return error.code;
  }
};

const verifyStandard = (
  headers: Record<string, string>,
  overrides: Partial<Parameters<typeof verifyWebhook>[0]> = {},
) => verifyWebhook({ secret: SECRET, header: headerOf(headers), body, nowSeconds: NOW, ...overrides });

describe('signStandard', () => {
  it("reproduces the specification's published example signature", () => {
    const headers = signStandard(standardKey(vector.secret ?? ''), {
      id: vector.id ?? '',
      timestamp: Number(vector.timestamp),
      body: text(vector.body ?? ''),
    });

    expect(headers['webhook-signature']).toBe(vector.signature);
    expect(headers).toMatchObject({ 'webhook-id': vector.id, 'webhook-timestamp': vector.timestamp });
  });

  it('signs "<id>.<timestamp>.<body>" with the decoded key, as a plain HMAC does', () => {
    const key = sourceKey(SECRET);
    const expected = crypto.createHmac('sha256', key).update(`msg_1.${NOW}.`).update(body).digest('base64');

    expect(signStandard(key, { id: 'msg_1', timestamp: NOW, body })['webhook-signature']).toBe(`v1,${expected}`);
  });
});

describe('sourceKey and standardKey', () => {
  it('decode a whsec_ secret and take any other inbound secret as its UTF-8 bytes', () => {
    expect(sourceKey(SECRET).toString('utf8')).toBe('01234567890123456789012345678901');
    expect(sourceKey('plain-secret').toString('utf8')).toBe('plain-secret');
    expect(standardKey(SECRET.slice('whsec_'.length))).toEqual(sourceKey(SECRET));
  });

  it.each([
    ['not base64', 'whsec_not base64!'],
    ['a key under 24 bytes', `whsec_${Buffer.alloc(23).toString('base64')}`],
    ['a key over 64 bytes', `whsec_${Buffer.alloc(65).toString('base64')}`],
  ])('refuses a whsec_ secret that is %s', (_name, secret) => {
    expect(() => sourceKey(secret)).toThrow(expect.objectContaining({ name: 'WebhookSecretFormatError' }));
  });
});

describe('verifyWebhook with Standard Webhooks headers', () => {
  const signed = (o: { id?: string; timestamp?: number; secret?: string; payload?: Uint8Array } = {}) => ({
    ...signStandard(sourceKey(o.secret ?? SECRET), {
      id: o.id ?? 'msg_1',
      timestamp: o.timestamp ?? NOW,
      body: o.payload ?? body,
    }),
  });

  it("accepts the specification's example at its own time and names it by its id", () => {
    const verified = verifyWebhook({
      secret: vector.secret,
      header: headerOf({
        'Webhook-Id': vector.id ?? '',
        'Webhook-Timestamp': vector.timestamp ?? '',
        'Webhook-Signature': vector.signature ?? '',
      }),
      body: text(vector.body ?? ''),
      nowSeconds: Number(vector.timestamp),
    });

    expect(verified).toEqual({ scheme: 'standard', timestamp: Number(vector.timestamp), replayId: `id:${vector.id}` });
  });

  it('accepts timestamps up to 5 minutes either way, and not one second more', () => {
    const at = (offset: number) => rejection(() => verifyStandard(signed({ timestamp: NOW + offset })));

    expect([at(-300), at(300), at(-301), at(301)]).toEqual([
      undefined,
      undefined,
      'E_WEBHOOK_TIMESTAMP',
      'E_WEBHOOK_TIMESTAMP',
    ]);
  });

  it('accepts one matching signature among several and skips other versions', () => {
    const good = signed();
    const other = signed({ secret: 'another-secret' });
    const header = `v1a,c2lnbmVk ${other['webhook-signature']} ${good['webhook-signature']}`;

    expect(verifyStandard({ ...good, 'webhook-signature': header }).scheme).toBe('standard');
  });

  it('compares every signature given in constant time, on buffers of equal length', () => {
    const good = signed();
    const header = `v1,c2hvcnQ= ${good['webhook-signature']} v1,${'A'.repeat(88)}`;

    verifyStandard({ ...good, 'webhook-signature': header });

    const calls = vi.mocked(crypto.timingSafeEqual).mock.calls;
    expect(calls).toHaveLength(3);
    for (const [a, b] of calls) expect((a as Buffer).length).toBe((b as Buffer).length);
  });

  it(`looks at no more than ${MAX_SIGNATURES} signatures of one header`, () => {
    const good = signed();
    const header = [...Array.from({ length: MAX_SIGNATURES }, () => 'v1,AAAA'), good['webhook-signature']].join(' ');

    expect(rejection(() => verifyStandard({ ...good, 'webhook-signature': header }))).toBe('E_WEBHOOK_SIGNATURE');
  });

  it.each<[string, (h: Record<string, string>) => Record<string, string>, WebhookRejection]>([
    ['a signature of another id', (h) => ({ ...h, 'webhook-id': 'msg_2' }), 'E_WEBHOOK_SIGNATURE'],
    ['a signature of another time', (h) => ({ ...h, 'webhook-timestamp': String(NOW + 1) }), 'E_WEBHOOK_SIGNATURE'],
    ['no id', ({ 'webhook-id': _, ...h }) => h, 'E_WEBHOOK_HEADERS'],
    ['an id with a space', (h) => ({ ...h, 'webhook-id': 'msg 1' }), 'E_WEBHOOK_HEADERS'],
    ['no timestamp', ({ 'webhook-timestamp': _, ...h }) => h, 'E_WEBHOOK_HEADERS'],
    ['a timestamp in milliseconds', (h) => ({ ...h, 'webhook-timestamp': `${NOW}000` }), 'E_WEBHOOK_HEADERS'],
    ['an empty signature', (h) => ({ ...h, 'webhook-signature': 'v1,' }), 'E_WEBHOOK_SIGNATURE'],
  ])('refuses %s', (_name, change, code) => {
    expect(rejection(() => verifyStandard(change(signed())))).toBe(code);
  });

  it('refuses a source without a secret as E_WEBHOOK_UNKNOWN_SOURCE after the same comparisons', () => {
    const code = rejection(() => verifyStandard(signed(), { secret: undefined }));

    expect(code).toBe('E_WEBHOOK_UNKNOWN_SOURCE');
    expect(vi.mocked(crypto.timingSafeEqual)).toHaveBeenCalledTimes(1);
  });

  it('refuses a misconfigured whsec_ secret like an unknown source rather than throwing', () => {
    expect(rejection(() => verifyStandard(signed(), { secret: 'whsec_###' }))).toBe('E_WEBHOOK_UNKNOWN_SOURCE');
  });
});

describe('verifyWebhook with X-Cairn-* headers', () => {
  const key = sourceKey('legacy-secret');

  it('accepts a signature of "<timestamp>.<body>" and names it by the signature', () => {
    const headers = signLegacy(key, body, NOW);

    const verified = verifyStandard({ ...headers }, { secret: 'legacy-secret' });

    expect(verified).toEqual({
      scheme: 'legacy',
      timestamp: NOW,
      replayId: `sig:${headers['X-Cairn-Signature'].slice('sha256='.length)}`,
    });
  });

  it('refuses a signature of the body alone as E_WEBHOOK_BODY_ONLY', () => {
    const bodyOnly = `sha256=${crypto.createHmac('sha256', key).update(body).digest('hex')}`;
    const headers = { 'X-Cairn-Timestamp': String(NOW), 'X-Cairn-Signature': bodyOnly };

    expect(rejection(() => verifyStandard(headers, { secret: 'legacy-secret' }))).toBe('E_WEBHOOK_BODY_ONLY');
  });

  it('refuses a stale timestamp before it looks at which form was signed', () => {
    const headers = signLegacy(key, body, NOW - 301);

    expect(rejection(() => verifyStandard({ ...headers }, { secret: 'legacy-secret' }))).toBe('E_WEBHOOK_TIMESTAMP');
  });

  it('refuses a delivery without any signature header as E_WEBHOOK_HEADERS', () => {
    expect(rejection(() => verifyStandard({ 'X-Cairn-Timestamp': String(NOW) }))).toBe('E_WEBHOOK_HEADERS');
  });
});
