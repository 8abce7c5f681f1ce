/**
 * Every API call the console makes: JSON in and out, `Authorization: Bearer` on each. A 401 signs the page out;
 * other failures become an ApiFailure carrying the status and the API's `{ error: { code, message, details } }`.
 */
import { clearToken, getConfig, getToken } from './auth.js';

export class ApiFailure extends Error {
  constructor(status, body) {
    const error = body?.error ?? {};
    super(error.message ?? `the API answered ${status}`);
    this.name = 'ApiFailure';
    this.status = status;
    this.code = error.code ?? `HTTP_${status}`;
    this.details = error.details;
  }
}

const listeners = new Set();
/** Called when the API refuses the token (the page shows the sign-in again). */
export const onSignedOut = (listener) => listeners.add(listener);

/** `signOutOn401: false` for a call that checks a token before it is kept (the sign-in form). */
export async function api(path, { method = 'GET', body, signOutOn401 = true } = {}) {
  const token = getToken();
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${getConfig()?.apiBase ?? ''}${path}`, {
    method,
    headers,
    cache: 'no-store',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (response.status === 401 && signOutOn401) {
    clearToken();
    for (const listener of listeners) listener();
  }
  if (!response.ok) throw new ApiFailure(response.status, json);
  return json;
}

export const get = (path) => api(path);
export const post = (path, body) => api(path, { method: 'POST', body });

/** Runs are paged by step; more pages than this means the plan kept changing under the reader. */
const MAX_STEP_PAGES = 100;

/**
 * A run with all its steps: `GET /runs/{id}` pages them (500 a page by default), so the pages are read in turn and
 * joined. A page from another plan revision (a replan landed meanwhile) restarts the read, once.
 */
export async function getRun(runId, { restarted = false } = {}) {
  const path = `/runs/${encodeURIComponent(runId)}`;
  const first = await get(path);
  const steps = [...first.steps];
  let cursor = first.nextCursor;
  for (let pages = 1; cursor && pages < MAX_STEP_PAGES; pages++) {
    const page = await get(`${path}?cursor=${encodeURIComponent(cursor)}`);
    if (page.revision !== first.revision) {
      if (restarted) break;
      return getRun(runId, { restarted: true });
    }
    steps.push(...page.steps);
    cursor = page.nextCursor;
  }
  const { nextCursor: _read, ...run } = first;
  return { ...run, steps };
}
