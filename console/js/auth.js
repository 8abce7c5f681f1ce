/**
 * Signing in. Locally the API takes the stack's static token: the operator pastes it once (or opens the page with
 * `#token=…`, which is read and removed from the address bar) and it stays in sessionStorage, so it goes when the tab
 * closes. Deployed, the API Gateway authorizer takes JWTs: with an OIDC provider configured the page runs the
 * authorization-code flow with PKCE against it; without one, a token can still be pasted.
 */
const TOKEN_KEY = 'cairn.token';
const FLOW_KEY = 'cairn.oidc';

let config;

export async function loadConfig() {
  if (config) return config;
  const response = await fetch('config.json', { cache: 'no-store' });
  if (!response.ok) throw new Error(`config.json answered ${response.status}`);
  config = await response.json();
  return config;
}

export const getConfig = () => config;

export function getToken() {
  const raw = sessionStorage.getItem(TOKEN_KEY);
  if (!raw) return null;
  try {
    const saved = JSON.parse(raw);
    if (saved.expiresAt && Date.now() > saved.expiresAt) {
      sessionStorage.removeItem(TOKEN_KEY);
      return null;
    }
    return saved.token;
  } catch {
    sessionStorage.removeItem(TOKEN_KEY);
    return null;
  }
}

export function setToken(token, expiresInSeconds) {
  const expiresAt = expiresInSeconds ? Date.now() + expiresInSeconds * 1000 : null;
  sessionStorage.setItem(TOKEN_KEY, JSON.stringify({ token: token.trim(), expiresAt }));
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** A `#token=…` in the address (what a launcher may print) becomes the session's token; the fragment is dropped. */
export function takeFragmentToken() {
  const match = /^#token=([^&]+)(?:&(.*))?$/.exec(location.hash);
  if (!match) return false;
  setToken(decodeURIComponent(match[1]));
  history.replaceState(null, '', `${location.pathname}${location.search}#${match[2] ? match[2] : '/runs'}`);
  return true;
}

const base64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

const redirectUri = () => `${location.origin}${location.pathname}`;

/** Sends the browser to the provider's authorize endpoint (authorization code + PKCE S256). */
export async function beginOidc(oidc) {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  sessionStorage.setItem(FLOW_KEY, JSON.stringify({ verifier, state, returnTo: location.hash || '#/runs' }));
  const url = new URL(oidc.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', oidc.clientId);
  url.searchParams.set('redirect_uri', redirectUri());
  url.searchParams.set('scope', oidc.scope);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  location.assign(url.toString());
}

/**
 * Finishes a sign-in when the provider sent the browser back with `?code=…&state=…`: checks the state, trades the
 * code for tokens and keeps the one the API's authorizer expects. Returns false when this is no such return.
 */
export async function completeOidc(oidc) {
  const params = new URLSearchParams(location.search);
  if (!params.has('code') && !params.has('error')) return false;
  const saved = JSON.parse(sessionStorage.getItem(FLOW_KEY) ?? 'null');
  sessionStorage.removeItem(FLOW_KEY);
  history.replaceState(null, '', `${location.pathname}${saved?.returnTo ?? '#/runs'}`);
  if (params.has('error')) {
    throw new Error(
      `the identity provider refused the sign-in: ${params.get('error_description') ?? params.get('error')}`,
    );
  }
  if (!saved || saved.state !== params.get('state'))
    throw new Error('the sign-in answer does not match this browser tab');
  const response = await fetch(oidc.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: params.get('code') ?? '',
      redirect_uri: redirectUri(),
      client_id: oidc.clientId,
      code_verifier: saved.verifier,
    }),
  });
  const body = await response.json().catch(() => ({}));
  const token = body[oidc.tokenField];
  if (!response.ok || typeof token !== 'string') {
    throw new Error(`the token endpoint answered ${response.status}${body.error ? ` (${body.error})` : ''}`);
  }
  setToken(token, typeof body.expires_in === 'number' ? body.expires_in : undefined);
  return true;
}
