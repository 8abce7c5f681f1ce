/**
 * The sign-in page: paste the API token (locally: the one `npm start` prints), or, deployed with an OIDC provider,
 * go through the provider. A pasted token is checked against the API before it is kept.
 */
import { ApiFailure, api } from '../api.js';
import { beginOidc, clearToken, getConfig, setToken } from '../auth.js';
import { h, replaceChildren } from '../dom.js';

export function signInPage(main, { message, onSignedIn }) {
  const config = getConfig();
  const oidc = config.auth.mode === 'jwt' ? config.auth.oidc : null;
  const status = h('p', { class: 'error', role: 'alert', id: 'sign-in-status' }, message ?? '');
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'token-help sign-in-status',
  });
  const form = h(
    'form',
    { class: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('label', { for: 'token' }, config.auth.mode === 'token' ? 'API token' : 'Bearer token (JWT)'),
    input,
    h(
      'p',
      { id: 'token-help', class: 'muted' },
      config.auth.mode === 'token'
        ? 'The token `npm start` prints (or CAIRN_API_TOKEN), or yours from its tokens file. It is kept in this tab only.'
        : 'A JWT the API accepts. It is kept in this tab only.',
    ),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    status.textContent = 'Checking…';
    setToken(input.value);
    try {
      // Any valid token, whatever its roles: who it stands for.
      await api('/me', { signOutOn401: false });
      onSignedIn();
    } catch (error) {
      clearToken();
      status.textContent =
        error instanceof ApiFailure && error.status === 401
          ? 'The API refused that token.'
          : `The API could not be reached: ${error.message}`;
      input.focus();
    }
  });
  replaceChildren(
    main,
    h(
      'section',
      { class: 'sign-in-page' },
      h('h1', { id: 'sign-in-title' }, 'Sign in to cairn'),
      oidc
        ? [
            h(
              'button',
              { type: 'button', class: 'primary', id: 'oidc-sign-in', onclick: () => void beginOidc(oidc) },
              'Sign in with your identity provider',
            ),
            h('p', { class: 'muted' }, 'Or paste a token:'),
          ]
        : null,
      form,
      status,
    ),
  );
  (oidc ? document.getElementById('oidc-sign-in') : input)?.focus();
  return { dispose() {} };
}
