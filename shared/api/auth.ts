/**
 * Bearer authentication, pluggable: locally a static token (compared in constant time); deployed, API Gateway's JWT
 * authorizer has already checked the caller before the Lambda runs, so the middleware only reads who it was.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { unauthorized } from './errors.ts';

export type AuthConfig = { readonly kind: 'token'; readonly token: string } | { readonly kind: 'gateway' };

/** The identity recorded on decisions: 'local-token' for the static token, the JWT `sub` when deployed. */
export const LOCAL_PRINCIPAL = 'local-token';
export const GATEWAY_PRINCIPAL = 'gateway';

export interface AuthVariables {
  principal: string;
}

// Hashing first makes the comparison constant-time for any length, and says nothing about the token's length.
const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

export function tokenMatches(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** The JWT `sub` claim from an API Gateway (HTTP API v2 or REST) request context, as hono/aws-lambda passes it. */
export function gatewaySubject(env: unknown): string | undefined {
  if (!isRecord(env) || !isRecord(env.requestContext)) return undefined;
  const authorizer = env.requestContext.authorizer;
  if (!isRecord(authorizer)) return undefined;
  const claims = isRecord(authorizer.jwt) ? authorizer.jwt.claims : authorizer.claims;
  if (!isRecord(claims)) return undefined;
  return typeof claims.sub === 'string' && claims.sub.length > 0 ? claims.sub : undefined;
}

export function authMiddleware(config: AuthConfig): MiddlewareHandler<{ Variables: AuthVariables }> {
  if (config.kind === 'token' && config.token.length === 0) throw new Error('auth: the API token must not be empty');
  return async (c, next) => {
    if (config.kind === 'gateway') {
      c.set('principal', gatewaySubject(c.env) ?? GATEWAY_PRINCIPAL);
      return next();
    }
    const given = bearerToken(c.req.header('authorization'));
    if (given === undefined || !tokenMatches(given, config.token)) {
      c.header('WWW-Authenticate', 'Bearer');
      throw unauthorized();
    }
    c.set('principal', LOCAL_PRINCIPAL);
    return next();
  };
}
