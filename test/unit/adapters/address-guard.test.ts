import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import {
  addressClass,
  checkLiteralHost,
  guardedLookup,
  type ResolveAll,
} from '../../../shared/adapters/address-guard.ts';
import { codeOf } from '../../support/capability-call.ts';

describe('addressClass', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.1.2', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.100.100.200', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['169.253.0.1', 'public'],
  ])('classes the IPv4 address %s as %s', (address, expected) => {
    expect(addressClass(address)).toBe(expected);
  });

  it.each([
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'private'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['ff02::1', 'reserved'],
    ['2001:4860:4860::8888', 'public'],
    ['fe00::1', 'public'],
  ])('classes the IPv6 address %s as %s', (address, expected) => {
    expect(addressClass(address)).toBe(expected);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:169.254.169.254]', 'link-local'],
    ['::ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::808:808', 'public'],
  ])('judges the IPv4 address the IPv6 form %s carries: %s', (address, expected) => {
    expect(addressClass(address)).toBe(expected);
  });

  it.each(['localhost', 'example.com', '1.2.3', '256.1.1.1', '1.2.3.4.5', '::1::', '1:2:3:4:5:6:7:8:9', 'g::1'])(
    'says %s is not an IP address',
    (text) => {
      expect(addressClass(text)).toBeUndefined();
    },
  );
});

describe('checkLiteralHost', () => {
  it('refuses a loopback literal with E_ADDRESS_REFUSED, permanently', () => {
    let error: unknown;
    try {
      checkLiteralHost('HTTP endpoint', '127.0.0.1');
    } catch (thrown) {
      error = thrown;
    }

    expect(error).toMatchObject({ name: 'CapabilityError', retryable: false });
    expect(codeOf(error as Record<string, unknown>)).toBe('E_ADDRESS_REFUSED');
    expect((error as Error).message).toContain('127.0.0.1 is a loopback address');
  });

  it('lets public literals and host names through', () => {
    expect(() => checkLiteralHost('HTTP endpoint', '93.184.215.14')).not.toThrow();
    expect(() => checkLiteralHost('HTTP endpoint', 'search.example.com')).not.toThrow();
  });
});

describe('guardedLookup', () => {
  const resolvingTo =
    (...addresses: string[]): ResolveAll =>
    (_hostname, _options, callback) =>
      callback(
        null,
        addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
  const lookUp = (resolve: ResolveAll, all: boolean) =>
    new Promise<{ error: unknown; address: unknown; family: unknown }>((done) => {
      guardedLookup('HTTP endpoint', resolve)('svc.example.com', { all }, (error, address, family) =>
        done({ error, address, family }),
      );
    });

  it('refuses a name when any of its addresses is internal, whatever comes first', async () => {
    const { error } = await lookUp(resolvingTo('93.184.215.14', '169.254.169.254'), true);

    expect(codeOf(error as Record<string, unknown>)).toBe('E_ADDRESS_REFUSED');
    expect((error as Error).message).toContain('svc.example.com resolves to 169.254.169.254, a link-local address');
  });

  it('answers the public addresses in the form the socket asked for', async () => {
    const resolve = resolvingTo('93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c');

    expect(await lookUp(resolve, true)).toEqual({
      error: null,
      address: [
        { address: '93.184.215.14', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
      family: undefined,
    });
    expect(await lookUp(resolve, false)).toEqual({ error: null, address: '93.184.215.14', family: 4 });
  });

  it('passes a resolver failure through', async () => {
    const failing: ResolveAll = (_hostname, _options, callback) =>
      callback(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), []);

    const { error } = await lookUp(failing, true);

    expect(error).toMatchObject({ code: 'ENOTFOUND' });
  });
});
