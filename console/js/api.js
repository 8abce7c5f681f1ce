/**
 * Every API call the console makes: JSON in and out, `Authorization: Bearer` on each. A 401 signs the page out;
 * other failures become an ApiFailure carrying the status and the API's `{ error: { code, message, details } }`.
 * Reads that may be repeated (a run, the runs list) are conditional: the last answer and its ETag are kept, the
 * next read sends `If-None-Match`, and a 304 answers the kept copy without downloading it again.
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
    /** An invalid plan's issues (`valid: false, errors`), when the answer has them. */
    this.issues = Array.isArray(body?.errors) ? body.errors : undefined;
  }
}

/** What to tell a person when the server refused: its code and its own words, and the first details. */
export function refusalText(error) {
  if (!(error instanceof ApiFailure)) return `It could not be sent: ${error.message}`;
  const details = (error.issues ?? (Array.isArray(error.details) ? error.details : []))
    .slice(0, 5)
    .map((d) => (typeof d === 'string' ? d : [d.path, d.message].filter(Boolean).join(' ')));
  return `The server refused (${error.code}): ${error.message}${details.length ? ` — ${details.join('; ')}` : ''}`;
}

const listeners = new Set();
/** Called when the API refuses the token (the page shows the sign-in again). */
export const onSignedOut = (listener) => listeners.add(listener);

/** The kept answers of conditional reads, by path: at most this many, oldest dropped first. */
const kept = new Map();
const KEPT_MAX = 64;

/** `signOutOn401: false` for a call that checks a token before it is kept (the sign-in form). */
export async function api(path, { method = 'GET', body, signOutOn401 = true, headers: extra = {}, idempotent } = {}) {
  const token = getToken();
  const headers = { accept: 'application/json', ...extra };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  // A key makes a retried POST (a lost answer) do the thing once.
  if (idempotent) headers['idempotency-key'] = crypto.randomUUID();
  const response = await fetch(`${getConfig()?.apiBase ?? ''}${path}`, {
    method,
    headers,
    cache: 'no-store',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 304) return { notModified: true, etag: response.headers.get('etag') };
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
  const etag = response.headers.get('etag');
  return etag ? { json, etag } : json;
}

const unwrap = (answer) => (answer && typeof answer === 'object' && 'etag' in answer ? answer.json : answer);

export const get = async (path) => unwrap(await api(path));
export const post = async (path, body, options = {}) => unwrap(await api(path, { method: 'POST', body, ...options }));

/**
 * A conditional read: sends the ETag of the kept answer and returns `{ json, changed }`, the kept copy (changed
 * false) when the server says it is still the same.
 */
export async function getConditional(path) {
  const known = kept.get(path);
  const answer = await api(path, known ? { headers: { 'if-none-match': known.etag } } : {});
  if (answer?.notModified && known) return { json: known.json, changed: false };
  if (answer && typeof answer === 'object' && 'etag' in answer && answer.etag) {
    kept.delete(path);
    kept.set(path, { etag: answer.etag, json: answer.json });
    if (kept.size > KEPT_MAX) kept.delete(kept.keys().next().value);
    return { json: answer.json, changed: true };
  }
  return { json: unwrap(answer), changed: true };
}

/** Runs are paged by step; more pages than this means the plan kept changing under the reader. */
const MAX_STEP_PAGES = 100;

/**
 * A run with all its steps: `GET /runs/{id}` pages them (100 a page by default, and under 1 MB), so the pages are read in turn and
 * joined, each conditionally. A page from another plan revision (a replan landed meanwhile) restarts the read,
 * once. `changed` is false when no page changed since the last read.
 */
export async function getRun(runId, { restarted = false } = {}) {
  const path = `/runs/${encodeURIComponent(runId)}`;
  const first = await getConditional(path);
  const steps = [...first.json.steps];
  let changed = first.changed;
  let cursor = first.json.nextCursor;
  for (let pages = 1; cursor && pages < MAX_STEP_PAGES; pages++) {
    const page = await getConditional(`${path}?cursor=${encodeURIComponent(cursor)}`);
    if (page.json.revision !== first.json.revision) {
      if (restarted) break;
      return getRun(runId, { restarted: true });
    }
    changed ||= page.changed;
    steps.push(...page.json.steps);
    cursor = page.json.nextCursor;
  }
  const { nextCursor: _read, ...run } = first.json;
  return { run: { ...run, steps }, changed };
}

/** Every page of a list the API pages with `nextCursor` (`key` names the list in the answer). */
export async function getAll(path, key, maxPages = 50) {
  const items = [];
  let cursor;
  for (let pages = 0; pages < maxPages; pages++) {
    const sep = path.includes('?') ? '&' : '?';
    const page = await get(cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path);
    items.push(...page[key]);
    cursor = page.nextCursor;
    if (!cursor) break;
  }
  return items;
}
