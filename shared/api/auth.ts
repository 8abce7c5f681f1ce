/**
 * Authentication, the app's one gate, in front of every route. A short, explicit list of public routes (the health
 * check, the OpenAPI document, the console's static files, the signed webhooks) passes without a caller; every other
 * request needs one (caller.ts): locally a bearer token, compared in constant time, either the one static token (a
 * shared admin, as before roles) or one of the tokens file's (tokens-file.ts); deployed, the verified JWT claims that
 * API Gateway's authorizer put in the request context. What a caller may then do is authorize.ts's to check.
 *
 * Deployed, the gateway also has routes without an authorizer (the console's `GET /console/{proxy+}`), and it routes
 * on the path as sent: `/console/../runs` or `/console/%2e%2e/runs` reach the function without claims, and the URL
 * parser turns them into `/runs` before the router sees them. So the function never trusts the gateway's routing: a
 * request without claims passes only when the path the router sees is public, and a public path is matched exactly
 * (no prefix, no other case, no trailing slash, no encoded separator or dot segment).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { type Caller, callerFromClaims, type RoleClaims, SHARED_CALLER } from './caller.ts';
import { unauthorized } from './errors.ts';
import { callerOfEntry, type TokenEntry } from './tokens-file.ts';

export { gatewaySubject, LOCAL_PRINCIPAL } from './caller.ts';

export type AuthConfig =
  /** The one static token: a shared admin (no tokens file). */
  | { readonly kind: 'token'; readonly token: string }
  /** The tokens file's entries: each token its own subject and roles. */
  | { readonly kind: 'tokens'; readonly tokens: readonly TokenEntry[] }
  /** API Gateway's JWT authorizer checked the caller; roles come from these claims (absent: the defaults). */
  | { readonly kind: 'gateway'; readonly claims?: RoleClaims };

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
  /** The caller's subject: what every change records as who asked. */
  principal: string;
  caller: Caller;
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

/** The entry whose token this is: every entry is compared (constant time each), so the time says nothing. */
function entryOf(tokens: readonly TokenEntry[], given: string): TokenEntry | undefined {
  let found: TokenEntry | undefined;
  for (const entry of tokens) if (tokenMatches(given, entry.token) && found === undefined) found = entry;
  return found;
}

/** The caller a bearer token stands for, by the configuration; undefined for a token nobody holds. */
function tokenCaller(config: Exclude<AuthConfig, { kind: 'gateway' }>, given: string): Caller | undefined {
  if (config.kind === 'token') return tokenMatches(given, config.token) ? SHARED_CALLER : undefined;
  const entry = entryOf(config.tokens, given);
  return entry === undefined ? undefined : callerOfEntry(entry);
}

export function authMiddleware(config: AuthConfig): MiddlewareHandler<{ Variables: AuthVariables }> {
  if (config.kind === 'token' && config.token.length === 0) throw new Error('auth: the API token must not be empty');
  if (config.kind === 'tokens' && config.tokens.length === 0) throw new Error('auth: the tokens file lists nobody');
  return async (c, next) => {
    if (isPublicRoute(c.req.method, c.req.path)) return next();
    let caller: Caller | undefined;
    if (config.kind === 'gateway') {
      // No claims: the gateway's authorizer did not run for this request (it came in through a public route).
      caller = callerFromClaims(c.env, config.claims);
      if (caller === undefined) {
        c.header('WWW-Authenticate', 'Bearer');
        throw unauthorized('no verified caller: this route needs a JWT checked by the API authorizer');
      }
    } else {
      const given = bearerToken(c.req.header('authorization'));
      caller = given === undefined ? undefined : tokenCaller(config, given);
      if (caller === undefined) {
        c.header('WWW-Authenticate', 'Bearer');
        throw unauthorized();
      }
    }
    c.set('caller', caller);
    c.set('principal', caller.subject);
    return next();
  };
}
