/**
 * Runs: newest first, with status, objective, progress (done/total), spend, start and duration; runs that wait for
 * a person's decision are set apart at the top ("waiting for you"), other pauses stay in the list. Filtered by status
 * and searched by objective or run id through the address (`#/runs?status=running&q=billing`), paged with the API's
 * `nextCursor` (Older / Newer), refreshed while the page is visible with the ETag of the last answer.
 */
import { getConditional } from '../api.js';
import { between, formatDuration, formatTime, h, replaceChildren, statusBadge, statusLabel } from '../dom.js';
import { poll, TERMINAL_RUN } from '../poll.js';
import { copyButton } from '../ui/copy.js';

const STATUSES = ['queued', 'planning', 'running', 'paused', 'complete', 'failed', 'cancelled'];
const LIMIT = 50;
const COLUMNS = ['Status', 'Objective', 'Progress', 'Tokens', 'Cost', 'Started', 'Duration'];

const money = (n) => (n > 0 ? `$${n < 0.01 ? n.toPrecision(2) : n.toFixed(2)}` : '—');

function row(run) {
  const { done, total } = run.progress;
  const end = TERMINAL_RUN.has(run.status) ? run.updatedAt : null;
  const href = `#/runs/${encodeURIComponent(run.runId)}`;
  const cell = (label, ...content) => h('td', { dataset: { label } }, ...content);
  return h(
    'tr',
    { dataset: { runId: run.runId } },
    cell(
      'Status',
      statusBadge(run.status),
      run.awaitingApproval > 0
        ? h('span', { class: 'badge waiting' }, `${run.awaitingApproval} waiting for you`)
        : null,
    ),
    h(
      'td',
      { class: 'objective', dataset: { label: 'Objective' } },
      h('a', { href }, run.objective),
      h('div', { class: 'muted mono small run-id' }, run.runId, copyButton(run.runId, 'Copy run id')),
    ),
    cell(
      'Progress',
      h('progress', {
        max: String(Math.max(total, 1)),
        value: String(done),
        'aria-label': `${done} of ${total} steps done`,
      }),
      h('span', { class: 'progress-text' }, ` ${done}/${total}`),
    ),
    cell('Tokens', run.usage?.tokens ? String(run.usage.tokens) : '—'),
    cell('Cost', money(run.usage?.costUsd ?? 0)),
    cell('Started', formatTime(run.createdAt)),
    cell('Duration', formatDuration(between(run.createdAt, end))),
  );
}

const table = (caption, body) =>
  h(
    'table',
    { class: 'runs' },
    h('caption', { class: 'visually-hidden' }, caption),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        COLUMNS.map((t) => h('th', { scope: 'col' }, t)),
      ),
    ),
    body,
  );

export function runsPage(main, { query }) {
  document.title = 'Runs · cairn';
  const status = STATUSES.includes(query.get('status')) ? query.get('status') : '';
  const q = (query.get('q') ?? '').trim();
  const cursor = query.get('cursor') ?? '';
  const select = h(
    'select',
    { id: 'status-filter', name: 'status' },
    h('option', { value: '' }, 'All statuses'),
    STATUSES.map((s) => h('option', { value: s, selected: s === status }, statusLabel(s))),
  );
  const search = h('input', {
    type: 'search',
    id: 'run-search',
    name: 'q',
    value: q,
    placeholder: 'Objective or run id',
    'aria-label': 'Search runs by objective or run id',
  });
  const go = (params) => {
    const next = new URLSearchParams();
    for (const [k, v] of Object.entries({ status, q, ...params })) if (v) next.set(k, v);
    location.hash = `#/runs${next.size ? `?${next}` : ''}`;
  };
  select.addEventListener('change', () => go({ status: select.value, cursor: '' }));
  const form = h('form', { class: 'search', role: 'search' }, search, h('button', { type: 'submit' }, 'Search'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    go({ q: search.value.trim(), cursor: '' });
  });

  const waitingBody = h('tbody');
  const waiting = h(
    'section',
    { class: 'waiting-for-you', id: 'waiting-for-you', hidden: true, 'aria-labelledby': 'waiting-title' },
    h('h2', { id: 'waiting-title' }, 'Waiting for you'),
    table('Runs waiting for your decision', waitingBody),
  );
  const body = h('tbody', { id: 'runs-body' });
  const note = h('p', { class: 'muted', role: 'status' });
  const older = h('a', { class: 'button', id: 'older-runs', hidden: true }, 'Older runs →');
  const newer = h('a', { class: 'button', id: 'newer-runs', hidden: true, href: '#' }, '← Newest');
  replaceChildren(
    main,
    h(
      'section',
      null,
      h(
        'div',
        { class: 'page-head' },
        h('h1', null, 'Runs'),
        h('a', { class: 'button primary', href: '#/new', id: 'new-run' }, 'New run'),
      ),
      h('div', { class: 'filters' }, form, h('label', { class: 'filter' }, 'Status ', select)),
      waiting,
      h('div', { class: 'table-scroll' }, table('Runs, newest first', body)),
      note,
      h('nav', { class: 'pager', 'aria-label': 'Pages of runs' }, newer, older),
    ),
  );

  const params = new URLSearchParams({ limit: String(LIMIT) });
  if (status) params.set('status', status);
  if (q) params.set('q', q);
  if (cursor) params.set('cursor', cursor);
  const refresh = async () => {
    const { json, changed } = await getConditional(`/runs?${params}`);
    if (!changed && body.childElementCount + note.textContent.length > 0) return;
    const { runs, nextCursor } = json;
    const forYou = runs.filter((r) => r.awaitingApproval > 0);
    waiting.hidden = forYou.length === 0;
    replaceChildren(waitingBody, forYou.map(row));
    replaceChildren(body, runs.filter((r) => !(r.awaitingApproval > 0)).map(row));
    const what = q ? `matching “${q}”` : '';
    note.textContent =
      runs.length === 0
        ? `No ${status ? `${statusLabel(status)} ` : ''}runs${what ? ` ${what}` : cursor ? ' on this page' : ' yet'}.`
        : '';
    older.hidden = !nextCursor;
    if (nextCursor) {
      const next = new URLSearchParams({ ...(status ? { status } : {}), ...(q ? { q } : {}), cursor: nextCursor });
      older.href = `#/runs?${next}`;
    }
    newer.hidden = !cursor;
    newer.href = `#/runs${status || q ? `?${new URLSearchParams({ ...(status ? { status } : {}), ...(q ? { q } : {}) })}` : ''}`;
  };
  refresh().catch((error) => {
    note.textContent = `Could not load the runs: ${error.message}`;
  });
  const timer = poll(refresh, 3000);
  return { dispose: () => timer.stop() };
}
