import * as crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  deliveryIdOf,
  signatureMatches,
  signWebhook,
  verifyWebhook,
  webhookDigest,
} from '../../../shared/api/webhook-signature.ts';
import { fixture } from './webhook-support.ts';

// The real timingSafeEqual, observed: the comparison must go through it, on buffers of equal length.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const body = new TextEncoder().encode('{"resourceKey":"k"}');
const NOW = 1_893_456_000;

const verify = (overrides: Partial<Parameters<typeof verifyWebhook>[0]> = {}) => {
  const headers = signWebhook('s3cret', body, NOW);
  return verifyWebhook({
    secret: 's3cret',
    signatureHeader: headers['X-Cairn-Signature'],
    timestampHeader: headers['X-Cairn-Timestamp'],
    body,
    nowSeconds: NOW,
    windowSeconds: 300,
    ...overrides,
  });
};

afterEach(() => {
  vi.mocked(crypto.timingSafeEqual).mockClear();
});

describe('signWebhook', () => {
  it('signs "<timestamp>.<body>" as openssl does', () => {
    const vector = JSON.parse(new TextDecoder().decode(fixture('signed-delivery.json'))) as Record<string, string>;

    const headers = signWebhook(vector.secret ?? '', new TextEncoder().encode(vector.body), Number(vector.timestamp));

    expect(headers).toEqual({ 'X-Cairn-Timestamp': vector.timestamp, 'X-Cairn-Signature': vector.signature });
  });
});

describe('signatureMatches', () => {
  const expected = webhookDigest('s3cret', String(NOW), body);

  it('accepts the signature in either hex case', () => {
    const hex = expected.toString('hex');

    expect(signatureMatches(expected, `sha256=${hex}`)).toBe(true);
    expect(signatureMatches(expected, `sha256=${hex.toUpperCase()}`)).toBe(true);
  });

  it.each([
    ['a short signature', 'sha256=abcd'],
    ['a long signature', `sha256=${'ab'.repeat(40)}`],
    ['non-hex characters', `sha256=${'zz'.repeat(32)}`],
    ['no header', undefined],
    ['an empty header', ''],
  ])('compares %s in constant time without throwing', (_name, header) => {
    expect(signatureMatches(expected, header)).toBe(false);

    const compare = vi.mocked(crypto.timingSafeEqual);
    expect(compare).toHaveBeenCalledTimes(1);
    const [a, b] = compare.mock.calls[0] ?? [];
    expect((a as Buffer).length).toBe((b as Buffer).length);
  });

  it('refuses a signature that differs only in its last byte', () => {
    const hex = expected.toString('hex');
    const last = hex.endsWith('0') ? '1' : '0';

    expect(signatureMatches(expected, `sha256=${hex.slice(0, -1)}${last}`)).toBe(false);
    expect(vi.mocked(crypto.timingSafeEqual)).toHaveBeenCalledTimes(1);
  });
});

describe('verifyWebhook', () => {
  it('accepts a fresh delivery and returns its timestamp and signature', () => {
    const result = verify();

    expect(result).toEqual({
      ok: true,
      timestamp: NOW,
      signature: webhookDigest('s3cret', String(NOW), body).toString('hex'),
      timestampBound: true,
    });
  });

  it('still compares both signature forms when the source has no secret, so timing tells nothing', () => {
    const result = verify({ secret: undefined });

    expect(result).toEqual({ ok: false, reason: 'no-secret' });
    expect(vi.mocked(crypto.timingSafeEqual)).toHaveBeenCalledTimes(2);
  });

  it.each([
    ['stale', { nowSeconds: NOW + 301 }],
    ['in the future', { nowSeconds: NOW - 301 }],
    ['garbled', { timestampHeader: '1893456000.5' }],
    ['missing', { timestampHeader: undefined }],
  ])('refuses a timestamp that is %s', (_name, overrides) => {
    expect(verify(overrides)).toEqual({ ok: false, reason: 'timestamp' });
  });

  it('refuses a body changed after signing', () => {
    expect(verify({ body: new TextEncoder().encode('{"resourceKey":"K"}') })).toEqual({
      ok: false,
      reason: 'signature',
    });
  });
});

describe('deliveryIdOf', () => {
  it('is stable for one delivery and differs by source and signature', () => {
    expect(deliveryIdOf('a', 'ff')).toBe(deliveryIdOf('a', 'ff'));
    expect(deliveryIdOf('a', 'ff')).not.toBe(deliveryIdOf('b', 'ff'));
    expect(deliveryIdOf('a', 'ff')).not.toBe(deliveryIdOf('a', 'fe'));
  });
});
