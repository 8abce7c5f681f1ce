/**
 * How the console signs in, told to the page by `GET /console/config.json`. Locally the API takes the stack's static
 * token, which the operator pastes once (kept in sessionStorage). Deployed behind API Gateway's JWT authorizer, the
 * page gets a JWT from the OIDC provider with the authorization-code flow and PKCE when an authorize URL, a token URL
 * and a client id are configured, and falls back to pasting a token otherwise.
 *
 * Environment (all optional): CAIRN_CONSOLE_OIDC_AUTHORIZE_URL, CAIRN_CONSOLE_OIDC_TOKEN_URL,
 * CAIRN_CONSOLE_OIDC_CLIENT_ID, CAIRN_CONSOLE_OIDC_SCOPE (default "openid"), CAIRN_CONSOLE_OIDC_TOKEN ("access"
 * or "id": which token the API's authorizer expects, default "access"), CAIRN_CONSOLE_API_BASE (an API origin other
 * than the page's), CAIRN_CONSOLE_DIR (where the console files are, for a bundled Lambda).
 */
import type { AuthConfig } from '../auth.ts';

export interface OidcSettings {
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  readonly scope: string;
  readonly tokenField: 'access_token' | 'id_token';
}

export interface ConsoleOptions {
  /** 'token': the API checks a static token; 'jwt': a gateway authorizer checks JWTs. */
  readonly auth: 'token' | 'jwt';
  readonly oidc?: OidcSettings;
  /** The API's origin when it is not the page's own (no trailing slash). */
  readonly apiBase?: string;
  readonly dir?: string;
  readonly pollMs?: number;
}

export interface ConsoleConfig {
  readonly auth: { readonly mode: 'token' } | { readonly mode: 'jwt'; readonly oidc: OidcSettings | null };
  readonly apiBase: string;
  readonly elk: { readonly api: string; readonly worker: string };
  readonly pollMs: number;
}

export const DEFAULT_POLL_MS = 1500;

type Env = Readonly<Record<string, string | undefined>>;

const isLoopback = (host: string): boolean => host === 'localhost' || host === '[::1]' || host.startsWith('127.');

/** An absolute https URL (http only for loopback hosts), or an Error naming the variable. */
function url(name: string, value: string): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new Error(`${name} must be an absolute URL, got ${JSON.stringify(value)}`);
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && isLoopback(parsed.hostname))) {
    throw new Error(`${name} must be an https URL, got ${JSON.stringify(value)}`);
  }
  return value;
}

export function consoleOptionsFromEnv(env: Env, auth: AuthConfig): ConsoleOptions {
  const authorize = env.CAIRN_CONSOLE_OIDC_AUTHORIZE_URL;
  const token = env.CAIRN_CONSOLE_OIDC_TOKEN_URL;
  const clientId = env.CAIRN_CONSOLE_OIDC_CLIENT_ID;
  const configured = [authorize, token, clientId].filter((v) => v !== undefined && v !== '');
  if (configured.length > 0 && configured.length < 3) {
    throw new Error(
      'console OIDC needs CAIRN_CONSOLE_OIDC_AUTHORIZE_URL, CAIRN_CONSOLE_OIDC_TOKEN_URL and CAIRN_CONSOLE_OIDC_CLIENT_ID together',
    );
  }
  const which = env.CAIRN_CONSOLE_OIDC_TOKEN ?? 'access';
  if (which !== 'access' && which !== 'id') throw new Error('CAIRN_CONSOLE_OIDC_TOKEN must be "access" or "id"');
  const oidc: OidcSettings | undefined =
    authorize && token && clientId
      ? {
          authorizeUrl: url('CAIRN_CONSOLE_OIDC_AUTHORIZE_URL', authorize),
          tokenUrl: url('CAIRN_CONSOLE_OIDC_TOKEN_URL', token),
          clientId,
          scope: env.CAIRN_CONSOLE_OIDC_SCOPE || 'openid',
          tokenField: which === 'id' ? 'id_token' : 'access_token',
        }
      : undefined;
  const apiBase = env.CAIRN_CONSOLE_API_BASE
    ? url('CAIRN_CONSOLE_API_BASE', env.CAIRN_CONSOLE_API_BASE).replace(/\/+$/, '')
    : undefined;
  return {
    auth: auth.kind === 'token' ? 'token' : 'jwt',
    ...(oidc ? { oidc } : {}),
    ...(apiBase ? { apiBase } : {}),
    ...(env.CAIRN_CONSOLE_DIR ? { dir: env.CAIRN_CONSOLE_DIR } : {}),
  };
}

export function consoleConfig(options: ConsoleOptions, elkPrefix: string): ConsoleConfig {
  return {
    auth: options.auth === 'token' ? { mode: 'token' } : { mode: 'jwt', oidc: options.oidc ?? null },
    apiBase: options.apiBase ?? '',
    elk: { api: `${elkPrefix}elk-api.js`, worker: `${elkPrefix}elk-worker.min.js` },
    pollMs: options.pollMs ?? DEFAULT_POLL_MS,
  };
}

/** The page's CSP: its own files only, data requests to the API (and the token endpoint), no framing. */
export function contentSecurityPolicy(config: ConsoleConfig): string {
  const connect = new Set(["'self'"]);
  if (config.apiBase) connect.add(new URL(config.apiBase).origin);
  if (config.auth.mode === 'jwt' && config.auth.oidc) connect.add(new URL(config.auth.oidc.tokenUrl).origin);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "worker-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src ${[...connect].join(' ')}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
