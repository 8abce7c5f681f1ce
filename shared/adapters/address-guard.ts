/**
 * Which addresses a binding's outbound HTTP call may reach. The binding's URL is the operator's, but what its host
 * resolves to, or where an answer points, is not: unless the binding is marked internal, a host that is, or resolves
 * to, a loopback, private, link-local (the cloud metadata service's 169.254.169.254), unspecified or multicast/reserved
 * address is refused, IPv4-mapped and other IPv6 forms that embed such an IPv4 address included.
 *
 * The check runs as the socket's own lookup (guardedLookup), so the addresses checked are the ones connected to: a
 * name that resolves to a public address once and to 127.0.0.1 the next time (DNS rebinding) gains nothing. A host
 * written as an IP needs no lookup, so the socket never asks: checkLiteralHost refuses it before connecting.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { CAPABILITY_ERROR_CODES, capabilityError } from '../capabilities/capability-errors.ts';
import type { CapabilityError } from '../errors.ts';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'reserved';
type Refused = Exclude<AddressClass, 'public'>;

interface Range {
  readonly prefix: readonly number[];
  readonly bits: number;
  readonly kind: Refused;
}

const V4_RANGES: readonly Range[] = [
  { prefix: [0], bits: 8, kind: 'unspecified' },
  { prefix: [127], bits: 8, kind: 'loopback' },
  { prefix: [10], bits: 8, kind: 'private' },
  { prefix: [172, 16], bits: 12, kind: 'private' },
  { prefix: [192, 168], bits: 16, kind: 'private' },
  // Shared (carrier-grade NAT) space: not routed on the internet, and one cloud's metadata service answers there.
  { prefix: [100, 64], bits: 10, kind: 'private' },
  { prefix: [169, 254], bits: 16, kind: 'link-local' },
  { prefix: [224], bits: 4, kind: 'reserved' },
  { prefix: [240], bits: 4, kind: 'reserved' },
];

const V6_RANGES: readonly Range[] = [
  { prefix: [], bits: 128, kind: 'unspecified' },
  { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], bits: 128, kind: 'loopback' },
  { prefix: [0xfc], bits: 7, kind: 'private' },
  // Site-local, deprecated but still routed inside some networks.
  { prefix: [0xfe, 0xc0], bits: 10, kind: 'private' },
  { prefix: [0xfe, 0x80], bits: 10, kind: 'link-local' },
  { prefix: [0xff], bits: 8, kind: 'reserved' },
];

/** IPv6 forms that carry an IPv4 address, which is what gets reached: the IPv4 address is judged instead. */
const V4_CARRIERS: readonly { readonly prefix: readonly number[]; readonly bits: number; readonly at: number }[] = [
  { prefix: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff], bits: 96, at: 12 }, // IPv4-mapped ::ffff:a.b.c.d
  { prefix: [0, 0x64, 0xff, 0x9b], bits: 96, at: 12 }, // NAT64 64:ff9b::a.b.c.d
  { prefix: [0x20, 0x02], bits: 16, at: 2 }, // 6to4 2002:aabb:ccdd::
  { prefix: [], bits: 96, at: 12 }, // IPv4-compatible ::a.b.c.d (deprecated)
];

const within = (bytes: readonly number[], prefix: readonly number[], bits: number): boolean => {
  for (let bit = 0; bit < bits; bit += 8) {
    const mask = bits - bit >= 8 ? 0xff : (0xff << (8 - (bits - bit))) & 0xff;
    if (((bytes[bit / 8] ?? 0) & mask) !== ((prefix[bit / 8] ?? 0) & mask)) return false;
  }
  return true;
};

function parseV4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return undefined;
  const bytes = parts.map(Number);
  return bytes.every((byte) => byte <= 255) ? bytes : undefined;
}

function parseV6(text: string): number[] | undefined {
  let hex = text;
  // A trailing dotted quad (::ffff:127.0.0.1) stands for the last two groups.
  const lastColon = hex.lastIndexOf(':');
  if (hex.includes('.', lastColon)) {
    const v4 = parseV4(hex.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    const group = (high: number, low: number) => ((high << 8) | low).toString(16);
    hex = `${hex.slice(0, lastColon + 1)}${group(v4[0] ?? 0, v4[1] ?? 0)}:${group(v4[2] ?? 0, v4[3] ?? 0)}`;
  }
  const halves = hex.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groupsOf(halves[0] ?? '');
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? '') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/i.test(group))) return undefined;
  return groups.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

const classOf = (bytes: readonly number[], ranges: readonly Range[]): AddressClass =>
  ranges.find((range) => within(bytes, range.prefix, range.bits))?.kind ?? 'public';

/**
 * What kind of address an IP literal is (brackets and an IPv6 zone allowed), or undefined when the text is not an IP
 * address at all (a host name).
 */
export function addressClass(address: string): AddressClass | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const v4 = parseV4(bare);
  if (v4 !== undefined) return classOf(v4, V4_RANGES);
  const v6 = bare.includes(':') ? parseV6(bare) : undefined;
  if (v6 === undefined) return undefined;
  const own = classOf(v6, V6_RANGES);
  if (own !== 'public') return own;
  const carrier = V4_CARRIERS.find((c) => within(v6, c.prefix, c.bits));
  return carrier === undefined ? 'public' : classOf(v6.slice(carrier.at, carrier.at + 4), V4_RANGES);
}

const DESCRIBED: Readonly<Record<Refused, string>> = {
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  unspecified: 'an unspecified address',
  reserved: 'a multicast or reserved address',
};

function refused(what: string, host: string, address: string, kind: Refused): CapabilityError {
  const where = host === address ? `${host} is` : `${host} resolves to ${address},`;
  return capabilityError(
    CAPABILITY_ERROR_CODES.addressRefused,
    `${what}: ${where} ${DESCRIBED[kind]}; only a binding marked "internal": true may call one`,
    { retryable: false, details: { host, address, addressClass: kind } },
  );
}

/** Throws the refusal when the host is an IP literal that is not public; a host name is left to guardedLookup. */
export function checkLiteralHost(what: string, hostname: string): void {
  const kind = addressClass(hostname);
  if (kind !== undefined && kind !== 'public') throw refused(what, hostname, hostname, kind);
}

/** How host names are resolved (node:dns `lookup`; tests pass their own answers). */
export type ResolveAll = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A socket lookup that resolves every address of the host and refuses the connection when any is not public: a name
 * that mixes public and internal addresses is not one to trust with a request either.
 */
export function guardedLookup(what: string, resolveAll: ResolveAll = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      for (const { address } of addresses) {
        const kind = addressClass(address) ?? 'reserved';
        if (kind !== 'public') return callback(refused(what, hostname, address, kind), []);
      }
      const [first] = addresses;
      if (options.all === true) return callback(null, addresses);
      if (first === undefined)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      return callback(null, first.address, first.family);
    });
  };
}
