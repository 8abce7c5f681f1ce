/**
 * A run's steps as a table, sortable by any column: status, title and id, target, attempts, duration, tokens and
 * cost. Filtered by text and status; a row opens the step in the graph. Kept current by the run session.
 */
import { between, formatDuration, h, replaceChildren, statusBadge, statusLabel } from '../dom.js';
import { runSession } from '../feed/run-session.js';
import { runHeader } from './run-header.js';

const money = (n) => (n > 0 ? `$${n < 0.01 ? n.toPrecision(2) : n.toFixed(2)}` : '—');

/** Columns: [key, label, value for sorting, cell]. */
const COLUMNS = [
  ['status', 'Status', (s) => s.status, (s) => statusBadge(s.status)],
  [
    'title',
    'Step',
    (s) => s.title.toLowerCase(),
    (s, href) => [h('a', { href }, s.title), h('div', { class: 'mono small muted' }, s.id)],
  ],
  ['target', 'Target', (s) => s.target ?? '', (s) => h('span', { class: 'mono small' }, s.target ?? 'group')],
  ['attempts', 'Attempts', (s) => s.attempts, (s) => String(s.attempts)],
  [
    'duration',
    'Duration',
    (s) => between(s.startedAt, s.finishedAt) ?? -1,
    (s) => formatDuration(between(s.startedAt, s.finishedAt)),
  ],
  ['tokens', 'Tokens', (s) => s.usage?.tokens ?? 0, (s) => (s.usage?.tokens ? String(s.usage.tokens) : '—')],
  ['cost', 'Cost', (s) => s.usage?.costUsd ?? 0, (s) => money(s.usage?.costUsd ?? 0)],
];
const NUMERIC = new Set(['attempts', 'duration', 'tokens', 'cost']);
const SHOWN = 500;

export function stepsPage(main, { runId, query }) {
  const header = runHeader(runId, '/steps', { onActed: () => session.refresh() });
  let sortKey = COLUMNS.some(([k]) => k === query.get('sort')) ? query.get('sort') : null;
  let descending = query.get('dir') === 'desc';
  const text = h('input', { type: 'search', id: 'step-filter', placeholder: 'Filter by title, id or target' });
  const statusFilter = h('select', { id: 'step-status' }, h('option', { value: '' }, 'All statuses'));
  const body = h('tbody');
  const note = h('p', { class: 'muted', role: 'status', id: 'steps-note' });
  const heads = COLUMNS.map(([key, label]) => {
    const button = h('button', { type: 'button', class: 'sort', dataset: { sort: key } }, label);
    button.addEventListener('click', () => {
      descending = sortKey === key ? !descending : NUMERIC.has(key);
      sortKey = key;
      render();
    });
    return h('th', { scope: 'col', dataset: { col: key } }, button);
  });
  replaceChildren(
    main,
    header.element,
    h(
      'section',
      { class: 'steps', 'aria-label': 'Steps' },
      h('div', { class: 'filters' }, h('label', null, 'Filter ', text), h('label', null, 'Status ', statusFilter)),
      h(
        'div',
        { class: 'table-scroll' },
        h('table', { class: 'step-table', id: 'step-table' }, h('thead', null, h('tr', null, heads)), body),
      ),
      note,
    ),
  );
  text.addEventListener('input', () => render());
  statusFilter.addEventListener('change', () => render());

  let run;
  function render() {
    if (!run) return;
    const statuses = [...new Set(run.steps.map((s) => s.status))].sort();
    if (statusFilter.options.length - 1 !== statuses.length) {
      const chosen = statusFilter.value;
      replaceChildren(
        statusFilter,
        h('option', { value: '' }, 'All statuses'),
        statuses.map((s) => h('option', { value: s, selected: s === chosen }, statusLabel(s))),
      );
    }
    const needle = text.value.trim().toLowerCase();
    let rows = run.steps.filter(
      (s) =>
        (!statusFilter.value || s.status === statusFilter.value) &&
        (!needle || `${s.title} ${s.id} ${s.target ?? ''}`.toLowerCase().includes(needle)),
    );
    const column = COLUMNS.find(([k]) => k === sortKey);
    if (column) {
      const value = column[2];
      rows = rows
        .map((s, i) => [s, i])
        .sort(([a, i], [b, j]) => {
          const x = value(a);
          const y = value(b);
          const order = x < y ? -1 : x > y ? 1 : i - j;
          return descending ? -order : order;
        })
        .map(([s]) => s);
    }
    for (const th of heads) {
      const key = th.dataset.col;
      th.setAttribute('aria-sort', key === sortKey ? (descending ? 'descending' : 'ascending') : 'none');
    }
    const base = `#/runs/${encodeURIComponent(runId)}?step=`;
    replaceChildren(
      body,
      rows.slice(0, SHOWN).map((s) =>
        h(
          'tr',
          { dataset: { stepId: s.id } },
          COLUMNS.map(([key, , , cell]) =>
            h('td', { dataset: { col: key } }, cell(s, `${base}${encodeURIComponent(s.id)}`)),
          ),
        ),
      ),
    );
    note.textContent =
      rows.length > SHOWN
        ? `${rows.length} steps; the first ${SHOWN} shown (filter or sort to see others).`
        : `${rows.length} of ${run.steps.length} steps.`;
  }

  const session = runSession(runId, {
    onError: (error) => {
      note.textContent = `Could not load the run: ${error.message}`;
    },
    onChange: (change) => {
      run = change.run;
      header.update(run);
      if (change.reason !== 'head') render();
    },
  });
  void session.open();
  return { dispose: () => session.stop() };
}
