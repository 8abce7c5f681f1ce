/**
 * The console's entry: reads config.json, signs in, then routes `#/…` to a page. A page is a function
 * `(main, params) => { dispose }`; dispose stops its polling when the reader moves on.
 */
import { get, onSignedOut } from './api.js';
import { clearToken, completeOidc, getToken, loadConfig, takeFragmentToken } from './auth.js';
import { h, replaceChildren } from './dom.js';
import { approvalsPage } from './pages/approvals.js';
import { eventsPage } from './pages/events.js';
import { newRunPage } from './pages/new-run.js';
import { revisionsPage } from './pages/revisions.js';
import { runPage } from './pages/run.js';
import { runsPage } from './pages/runs.js';
import { signInPage } from './pages/sign-in.js';
import { stepsPage } from './pages/steps.js';
import { timelinePage } from './pages/timeline.js';
import { poll } from './poll.js';

const main = document.getElementById('main');
const signOut = document.getElementById('sign-out');
const who = document.getElementById('who');
const inboxCount = document.getElementById('inbox-count');

const ROUTES = [
  [/^\/runs\/([^/]+)\/steps$/, (m) => ({ page: stepsPage, params: { runId: decodeURIComponent(m[1]) } })],
  [/^\/runs\/([^/]+)\/events$/, (m) => ({ page: eventsPage, params: { runId: decodeURIComponent(m[1]) } })],
  [/^\/runs\/([^/]+)\/timeline$/, (m) => ({ page: timelinePage, params: { runId: decodeURIComponent(m[1]) } })],
  [/^\/runs\/([^/]+)\/revisions$/, (m) => ({ page: revisionsPage, params: { runId: decodeURIComponent(m[1]) } })],
  [/^\/runs\/([^/]+)$/, (m) => ({ page: runPage, params: { runId: decodeURIComponent(m[1]) } })],
  [/^\/runs$/, () => ({ page: runsPage, params: {} })],
  [/^\/approvals$/, () => ({ page: approvalsPage, params: {} })],
  [/^\/new$/, () => ({ page: newRunPage, params: {} })],
];

/** How often the inbox badge is asked, while the tab is visible (poll.js skips hidden tabs). */
const BADGE_MS = 15_000;

let current;
let badgeTimer;

function resolve() {
  const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
  for (const [pattern, make] of ROUTES) {
    const match = pattern.exec(path);
    if (match) {
      const route = make(match);
      return { ...route, params: { ...route.params, query: new URLSearchParams(query) } };
    }
  }
  return undefined;
}

function markNav(path) {
  for (const link of document.querySelectorAll('[data-nav]')) {
    const active = path.startsWith(`/${link.dataset.nav}`);
    if (active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

async function refreshBadge() {
  if (!getToken()) return;
  try {
    const { approvals } = await get('/approvals?status=pending');
    inboxCount.textContent = String(approvals.length);
    inboxCount.hidden = approvals.length === 0;
  } catch {
    // The badge is a hint; the inbox page reports failures itself.
  }
}

function startBadge() {
  badgeTimer?.stop();
  void refreshBadge();
  badgeTimer = poll(refreshBadge, BADGE_MS);
  void showWho();
}

/** Who the token stands for: every decision made here is recorded under this subject. */
async function showWho() {
  try {
    const me = await get('/me');
    who.textContent = `${me.subject}${me.roles.length ? ` · ${me.roles.join(', ')}` : ' · no role'}`;
    who.title = `Signed in as ${me.subject}: your decisions are recorded under this name.`;
    who.hidden = false;
  } catch {
    who.hidden = true;
  }
}

function showSignIn(message) {
  current?.dispose?.();
  current = undefined;
  badgeTimer?.stop();
  document.title = 'Sign in · cairn';
  signOut.hidden = true;
  who.hidden = true;
  markNav('');
  current = signInPage(main, {
    message,
    onSignedIn: () => {
      startBadge();
      void route();
    },
  });
}

async function route() {
  if (!getToken()) return showSignIn();
  signOut.hidden = false;
  const resolved = resolve();
  if (!resolved) {
    location.replace('#/runs');
    return;
  }
  current?.dispose?.();
  markNav(location.hash.replace(/^#/, ''));
  document.title = 'cairn console';
  replaceChildren(main, h('p', { class: 'muted' }, 'Loading…'));
  current = resolved.page(main, resolved.params);
}

async function boot() {
  let config;
  try {
    config = await loadConfig();
  } catch (error) {
    replaceChildren(main, h('p', { class: 'error', role: 'alert' }, `The console could not start: ${error.message}`));
    return;
  }
  let message;
  if (config.auth.mode === 'jwt' && config.auth.oidc) {
    try {
      await completeOidc(config.auth.oidc);
    } catch (error) {
      message = error.message;
    }
  }
  takeFragmentToken();
  onSignedOut(() => showSignIn('The API refused the token (it may have expired). Sign in again.'));
  signOut.addEventListener('click', () => {
    clearToken();
    showSignIn('Signed out.');
  });
  window.addEventListener('hashchange', () => void route());
  if (message) return showSignIn(message);
  startBadge();
  await route();
}

void boot();
