/**
 * How the console signs in, told to the page by `GET /console/config.json`. Locally the API takes the stack's static
 * token, which the operator pastes once (kept in sessionStorage). Deployed behind API Gateway's JWT authorizer, the
 * page gets a JWT from the OIDC provider with the authorization-code flow and PKCE when an authorize URL, a token URL
 * and a client id are configured, and falls back to pasting a token otherwise.
 *
 * Settings (all optional, read and checked by shared/config/settings.ts): CAIRN_CONSOLE_OIDC_AUTHORIZE_URL,
 * CAIRN_CONSOLE_OIDC_TOKEN_URL, CAIRN_CONSOLE_OIDC_CLIENT_ID, CAIRN_CONSOLE_OIDC_SCOPE, CAIRN_CONSOLE_OIDC_TOKEN
 * ("access" or "id": which token the API's authorizer expects), CAIRN_CONSOLE_API_BASE (an API origin other than the
 * page's), CAIRN_CONSOLE_DIR (where the console files are, for a bundled Lambda).
 */
import type { ConsoleSettings } from '../../config/settings.ts';
import type { AuthConfig } from '../auth.ts';

export type OidcSettings = NonNullable<ConsoleSettings['oidc']>;

export interface ConsoleOptions {
  /** 'token': the API checks a static token (or a tokens file's); 'jwt': a gateway authorizer checks JWTs. */
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

/** The page's options: how the API checks callers, and the console settings (Settings.console). */
export function consoleOptions(settings: ConsoleSettings | undefined, auth: AuthConfig): ConsoleOptions {
  return {
    auth: auth.kind === 'gateway' ? 'jwt' : 'token',
    ...(settings?.oidc ? { oidc: settings.oidc } : {}),
    ...(settings?.apiBase ? { apiBase: settings.apiBase } : {}),
    ...(settings?.dir ? { dir: settings.dir } : {}),
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
