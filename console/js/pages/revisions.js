/**
 * A run's plan revisions: each with its reason (the initial plan, a replan, an invalidation) and the counts of what
 * changed; selecting one shows the diff against the revision before it (added, removed, changed with the fields
 * that differ, superseded) and the plan itself.
 */
import { get, getRun } from '../api.js';
import { formatTime, h, replaceChildren } from '../dom.js';
import { jsonTree } from '../ui/json-tree.js';
import { runHeader } from './run-header.js';

const KINDS = [
  ['added', 'Added', '+'],
  ['removed', 'Removed', '−'],
  ['changed', 'Changed', '~'],
  ['superseded', 'Superseded', '✎'],
];

const countText = (changes) => (changes ? KINDS.map(([key, , mark]) => `${mark}${changes[key]}`).join(' ') : '—');

function diffView(answer, plan) {
  const { diff } = answer;
  return h(
    'div',
    { class: 'diff', id: 'diff' },
    h(
      'h2',
      null,
      answer.from ? `Revision ${answer.to} against ${answer.from}` : `Revision ${answer.to} (the first plan)`,
    ),
    h('p', null, h('strong', null, 'Reason: '), answer.reason),
    KINDS.map(([key, label, mark]) =>
      h(
        'section',
        { class: `diff-${key}` },
        h('h3', null, `${label} (${diff[key].length})`),
        diff[key].length === 0
          ? h('p', { class: 'muted' }, 'None.')
          : h(
              'ul',
              { class: 'plain' },
              diff[key].map((step) =>
                h(
                  'li',
                  null,
                  h('span', { class: 'diff-mark', 'aria-hidden': 'true' }, mark),
                  ' ',
                  h('span', { class: 'mono' }, step.id),
                  ` ${step.title}`,
                  step.fields ? h('span', { class: 'muted' }, ` — ${step.fields.join(', ')}`) : null,
                ),
              ),
            ),
      ),
    ),
    plan ? h('details', null, h('summary', null, `Plan of revision ${answer.to}`), jsonTree(plan, 'Plan JSON')) : null,
  );
}

export function revisionsPage(main, { runId, query }) {
  const header = runHeader(runId, '/revisions', {
    onActed: async () => header.update((await getRun(runId)).run),
  });
  const body = h('tbody');
  const detail = h('div', { 'aria-live': 'polite' });
  replaceChildren(
    main,
    header.element,
    h(
      'section',
      { class: 'revisions' },
      h(
        'table',
        { class: 'revisions-table' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Revision', 'Created', 'Reason', 'Steps', 'Changes'].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        body,
      ),
      detail,
    ),
  );
  const base = `#/runs/${encodeURIComponent(runId)}/revisions`;
  let stopped = false;

  const showDiff = async (revision) => {
    replaceChildren(detail, h('p', { class: 'muted' }, 'Loading…'));
    const [answer, plan] = await Promise.all([
      get(`/runs/${encodeURIComponent(runId)}/revisions/${revision}/diff`),
      get(`/runs/${encodeURIComponent(runId)}/plan?revision=${revision}`),
    ]);
    if (!stopped) replaceChildren(detail, diffView(answer, plan.plan));
  };

  (async () => {
    // Every page of steps: the head's progress counts them all.
    const [{ run }, list] = await Promise.all([getRun(runId), get(`/runs/${encodeURIComponent(runId)}/revisions`)]);
    if (stopped) return;
    header.update(run);
    const chosen = Number(query.get('revision')) || list.revision;
    replaceChildren(
      body,
      list.revisions.map((r) =>
        h(
          'tr',
          { class: r.revision === chosen ? 'chosen' : null },
          h(
            'td',
            null,
            h(
              'a',
              { href: `${base}?revision=${r.revision}`, 'aria-current': r.revision === chosen ? 'true' : null },
              `Revision ${r.revision}`,
            ),
            r.current ? [' ', h('span', { class: 'badge' }, 'current')] : null,
          ),
          h('td', null, formatTime(r.createdAt)),
          h('td', null, r.reason),
          h('td', null, String(r.steps)),
          h('td', { class: 'mono' }, countText(r.changes)),
        ),
      ),
    );
    if (list.revisions.length === 0) replaceChildren(detail, h('p', { class: 'muted' }, 'No plan yet.'));
    else await showDiff(chosen);
  })().catch((error) =>
    replaceChildren(
      detail,
      h('p', { class: 'error', role: 'alert' }, `Could not load the revisions: ${error.message}`),
    ),
  );

  return {
    dispose() {
      stopped = true;
    },
  };
}
