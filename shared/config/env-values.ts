/**
 * The value parsers of settings.ts, one per kind of CAIRN_* variable: each takes the raw string (absent or blank →
 * the default it is given) and checks it, with a message that names what was expected and what was given; the
 * settings parser prefixes the variable's name.
 */

import { z } from 'zod';
import { TENANT_PATTERN } from './defaults.ts';

/** Blank counts as absent, as CDK and shells leave it. */
export const given = z.preprocess(
  (raw) => (typeof raw === 'string' && raw.trim() !== '' ? raw : undefined),
  z.string().optional(),
);

export const text = given;

export function numberOf(check: (n: number) => boolean, what: string, fallback: number) {
  return given.transform((raw, ctx) => {
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (check(value)) return value;
    ctx.addIssue({ code: 'custom', message: `must be ${what}, got ${JSON.stringify(raw)}` });
    return z.NEVER;
  });
}

export const positiveInteger = (fallback: number) =>
  numberOf((n) => Number.isInteger(n) && n >= 1, 'a positive integer', fallback);
export const nonNegative = (fallback: number) =>
  numberOf((n) => Number.isFinite(n) && n >= 0, 'a non-negative number', fallback);

/** Parses with a parser of a lower layer, whose error message becomes the issue's (without the name twice). */
export function parsedBy<T>(variable: string, parse: (raw: string | undefined) => T) {
  return given.transform((raw, ctx) => {
    try {
      return parse(raw);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      ctx.addIssue({
        code: 'custom',
        message: message.startsWith(`${variable} `) ? message.slice(variable.length + 1) : `is invalid: ${message}`,
      });
      return z.NEVER;
    }
  });
}

/**
 * A JSON object of source → `what` (a string each value must pass `valid`, else `problem` is said), as a Map, not an object: a source named
 * `__proto__` or `constructor` is only ever a key.
 */
const sourceMap = (what: string, valid: (value: string) => boolean, problem: string) =>
  given.transform((raw, ctx): ReadonlyMap<string, string> => {
    const map = new Map<string, string>();
    if (raw === undefined) return map;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      value = undefined;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: `must be a JSON object of source → ${what}` });
      return z.NEVER;
    }
    for (const [source, entry] of Object.entries(value)) {
      if (typeof entry !== 'string' || !valid(entry)) {
        ctx.addIssue({ code: 'custom', message: `: the ${what} of ${JSON.stringify(source)} ${problem}` });
        return z.NEVER;
      }
      map.set(source, entry);
    }
    return map;
  });

/** CAIRN_WEBHOOK_SECRETS: a JSON object of source → secret (a non-empty string). */
export const webhookSecrets = sourceMap('secret', (secret) => secret !== '', 'must be a non-empty string');

/** CAIRN_WEBHOOK_TENANTS: a JSON object of source → tenant (a source not named reports the default tenant's resources). */
export const webhookTenants = sourceMap('tenant', (tenant) => TENANT_PATTERN.test(tenant), 'is not a tenant name');

const isLoopback = (host: string): boolean => host === 'localhost' || host === '[::1]' || host.startsWith('127.');

/** An absolute https URL (http only for loopback hosts). */
export const httpsUrl = given.transform((raw, ctx) => {
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    ctx.addIssue({ code: 'custom', message: `must be an absolute URL, got ${JSON.stringify(raw)}` });
    return z.NEVER;
  }
  if (parsed.protocol === 'https:' || (parsed.protocol === 'http:' && isLoopback(parsed.hostname))) return raw;
  ctx.addIssue({ code: 'custom', message: `must be an https URL, got ${JSON.stringify(raw)}` });
  return z.NEVER;
});

/** An absolute http(s) URL: model servers on a laptop or a private network often speak plain http. */
export const httpUrl = given.transform((raw, ctx) => {
  if (raw === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = undefined;
  }
  if (parsed !== undefined && (parsed.protocol === 'https:' || parsed.protocol === 'http:')) return raw;
  ctx.addIssue({ code: 'custom', message: `must be an absolute http(s) URL, got ${JSON.stringify(raw)}` });
  return z.NEVER;
});
