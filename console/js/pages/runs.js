/**
 * Runs: newest first, with status, objective, progress (done/total), start and duration; filtered by status through
 * the address (`#/runs?status=running`), refreshed while the page is open.
 */
import { get } from '../api.js';
import { between, formatDuration, formatTime, h, replaceChildren, statusBadge, statusLabel } from '../dom.js';
import { poll, TERMINAL_RUN } from '../poll.js';

const STATUSES = ['planning', 'running', 'paused', 'complete', 'failed', 'cancelled'];
const LIMIT = 100;

function row(run) {
  const { done, total } = run.progress;
  const end = TERMINAL_RUN.has(run.status) ? run.updatedAt : null;
  const href = `#/runs/${encodeURIComponent(run.runId)}`;
  return h(
    'tr',
    { dataset: { runId: run.runId } },
    h('td', null, statusBadge(run.status)),
    h(
      'td',
      { class: 'objective' },
      h('a', { href }, run.objective),
      h('div', { class: 'muted mono small' }, run.runId),
    ),
    h(
      'td',
      null,
      h('progress', {
        max: String(Math.max(total, 1)),
        value: String(done),
        'aria-label': `${done} of ${total} steps done`,
      }),
      h('span', { class: 'progress-text' }, ` ${done}/${total}`),
    ),
    h('td', null, formatTime(run.createdAt)),
    h('td', null, formatDuration(between(run.createdAt, end))),
  );
}

export function runsPage(main, { query }) {
  const status = STATUSES.includes(query.get('status')) ? query.get('status') : '';
  const select = h(
    'select',
    { id: 'status-filter', name: 'status' },
    h('option', { value: '' }, 'All statuses'),
    STATUSES.map((s) => h('option', { value: s, selected: s === status }, statusLabel(s))),
  );
  select.addEventListener('change', () => {
    location.hash = select.value ? `#/runs?status=${select.value}` : '#/runs';
  });
  const body = h('tbody');
  const note = h('p', { class: 'muted', role: 'status' });
  const table = h(
    'table',
    { class: 'runs' },
    h('caption', { class: 'visually-hidden' }, 'Runs, newest first'),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['Status', 'Objective', 'Progress', 'Started', 'Duration'].map((t) => h('th', { scope: 'col' }, t)),
      ),
    ),
    body,
  );
  replaceChildren(
    main,
    h(
      'section',
      null,
      h('div', { class: 'page-head' }, h('h1', null, 'Runs'), h('label', { class: 'filter' }, 'Status ', select)),
      table,
      note,
    ),
  );

  const refresh = async () => {
    const { runs } = await get(`/runs?limit=${LIMIT}${status ? `&status=${status}` : ''}`);
    replaceChildren(body, runs.map(row));
    note.textContent = runs.length === 0 ? (status ? `No ${statusLabel(status)} runs.` : 'No runs yet.') : '';
  };
  refresh().catch((error) => {
    note.textContent = `Could not load the runs: ${error.message}`;
  });
  const timer = poll(refresh, 3000);
  return { dispose: () => timer.stop() };
}
