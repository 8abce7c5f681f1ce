/**
 * The head shared by a run's pages (graph, steps, events, timeline, revisions): objective, status, progress,
 * revision, spend, the run's actions (cancel, replan), and tabs. It also names the browser tab after the run.
 */
import { h, replaceChildren, statusBadge } from '../dom.js';
import { idWithCopy } from '../ui/copy.js';
import { runActions } from './run-actions.js';
import { budgetReplanText, spendText } from './spend.js';

export const TABS = [
  ['', 'Graph'],
  ['/steps', 'Steps'],
  ['/events', 'Events'],
  ['/timeline', 'Timeline'],
  ['/revisions', 'Revisions'],
];

/** Only a step that did its work is done: a failed, blocked or cancelled one ended without it. */
const DONE = new Set(['succeeded', 'skipped']);

export function progressOf(run) {
  const counted = run.steps.filter((s) => s.target !== null && s.status !== 'superseded');
  return { done: counted.filter((s) => DONE.has(s.status)).length, total: counted.length };
}

/**
 * Spend against the plan's budget (GET /runs/{id} `usage` and `budget`), when there is any: after a budget replan,
 * the budget of the revision it made (the spend is never reset).
 */
function spendOf(run) {
  const text = spendText(run.usage, run.budget);
  return text === '' ? null : h('span', { id: 'run-spend' }, ` · ${text}`);
}

/** What became of the run's budget replan, its figures and reason shown beside it. */
function budgetReplanOf(run) {
  const line = budgetReplanText(run.budgetReplan);
  if (!line) return null;
  return h(
    'span',
    { id: 'run-budget-replan', title: line.detail },
    ` · ${line.text}`,
    h('span', { class: 'muted budget-replan-detail' }, ` (${line.detail})`),
  );
}

const TAB_NAMES = new Map(TABS);

export function runHeader(runId, active, { onActed } = {}) {
  const title = h('h1', { class: 'objective' }, 'Run');
  const meta = h('p', { class: 'run-meta' });
  const actions = h('div', { class: 'run-actions-host' });
  const notice = h('p', { class: 'notice', role: 'status', id: 'run-notice' });
  const base = `#/runs/${encodeURIComponent(runId)}`;
  const element = h(
    'header',
    { class: 'run-head' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/runs' }, 'Runs'), ' / ', idWithCopy(runId, 'Copy run id')),
    h('div', { class: 'run-title' }, title, actions),
    meta,
    notice,
    h(
      'nav',
      { class: 'tabs', 'aria-label': 'Run views' },
      TABS.map(([suffix, label]) =>
        h('a', { href: `${base}${suffix}`, 'aria-current': suffix === active ? 'page' : null }, label),
      ),
    ),
  );
  let shownKey;
  return {
    element,
    update(run) {
      title.textContent = run.objective;
      document.title = `${TAB_NAMES.get(active) ?? 'Run'} · ${run.objective} · cairn`;
      const { done, total } = progressOf(run);
      replaceChildren(
        meta,
        statusBadge(run.status),
        run.cancelling ? h('span', { class: 'badge status-cancelled' }, 'cancelling') : null,
        h('span', { id: 'run-progress' }, ` ${done}/${total} steps done`),
        ` · revision ${run.revision}`,
        run.terminal ? h('span', { class: 'muted' }, ` · ${run.terminal.reason}`) : null,
        spendOf(run),
        budgetReplanOf(run),
      );
      const actionKey = `${run.status}/${run.revision}/${run.cancelling ?? ''}/${run.terminal?.reason ?? ''}`;
      if (actionKey !== shownKey) {
        shownKey = actionKey;
        replaceChildren(
          actions,
          runActions(run, (message) => {
            notice.textContent = message ?? '';
            onActed?.();
          }),
        );
      }
    },
  };
}
