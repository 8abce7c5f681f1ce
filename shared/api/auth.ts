/**
 * Authentication, the app's one gate, in front of every route. A short, explicit list of public routes (the health
 * check, the OpenAPI document, the console's static files, the signed webhooks) passes without a caller; every other request needs one:
 * locally a static bearer token (compared in constant time); deployed, the verified JWT claims that API Gateway's
 * authorizer put in the request context.
 *
 * Deployed, the gateway also has routes without an authorizer (the console's `GET /console/{proxy+}`), and it routes
 * on the path as sent: `/console/../runs` or `/console/%2e%2e/runs` reach the function without claims, and the URL
 * parser turns them into `/runs` before the router sees them. So the function never trusts the gateway's routing: a
 * request without claims passes only when the path the router sees is public, and a public path is matched exactly
 * (no prefix, no other case, no trailing slash, no encoded separator or dot segment).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { unauthorized } from './errors.ts';

export type AuthConfig = { readonly kind: 'token'; readonly token: string } | { readonly kind: 'gateway' };

/** The identity recorded on decisions: 'local-token' for the static token, the JWT `sub` when deployed. */
export const LOCAL_PRINCIPAL = 'local-token';

const READ = new Set(['GET', 'HEAD']);
const WRITE = new Set(['POST']);
/** One path segment of a console file: file-name characters only, and not a dot segment (no file starts with '.'). */
const CONSOLE_SEGMENT = '[A-Za-z0-9_-][A-Za-z0-9._-]*';

/**
 * The routes that need no caller, by method and whole path. Anything not matched here needs one, including paths
 * that no route serves (so a 404 never tells an anonymous caller which routes exist).
 */
export const PUBLIC_ROUTES: readonly { readonly methods: ReadonlySet<string>; readonly path: RegExp }[] = [
  { methods: READ, path: /^\/health$/ },
  // The contract (OpenAPI) describes the routes and holds no data: clients and tools read it before they have a token.
  { methods: READ, path: /^\/openapi\.json$/ },
  // The page holds no data: it loads before sign-in and every data request it makes carries a token.
  { methods: READ, path: /^\/console$/ },
  { methods: READ, path: new RegExp(`^/console/(?:${CONSOLE_SEGMENT}/)*(?:${CONSOLE_SEGMENT})?$`) },
  // Signed by the sender instead (webhooks.ts); every refusal there is the same 401.
  { methods: WRITE, path: /^\/webhooks\/[^/]+$/ },
];

/** Whether a request may pass without a caller: `path` is the one the router matches (after URL normalisation). */
export const isPublicRoute = (method: string, path: string): boolean =>
  PUBLIC_ROUTES.some((route) => route.methods.has(method) && route.path.test(path));

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
    if (isPublicRoute(c.req.method, c.req.path)) return next();
    if (config.kind === 'gateway') {
      // No claims: the gateway's authorizer did not run for this request (it came in through a public route).
      const subject = gatewaySubject(c.env);
      if (subject === undefined) {
        c.header('WWW-Authenticate', 'Bearer');
        throw unauthorized('no verified caller: this route needs a JWT checked by the API authorizer');
      }
      c.set('principal', subject);
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
