/**
 * The head shared by a run's pages (graph, timeline, revisions): objective, status, progress, revision, and tabs.
 */
import { h, replaceChildren, statusBadge } from '../dom.js';
import { budgetReplanText, spendText } from './spend.js';

const TABS = [
  ['', 'Graph'],
  ['/timeline', 'Timeline'],
  ['/revisions', 'Revisions'],
];

const FINISHED = new Set(['succeeded', 'failed', 'skipped', 'blocked', 'cancelled']);

export function progressOf(run) {
  const counted = run.steps.filter((s) => s.target !== null && s.status !== 'superseded');
  return { done: counted.filter((s) => FINISHED.has(s.status)).length, total: counted.length };
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

export function runHeader(runId, active) {
  const title = h('h1', { class: 'objective' }, 'Run');
  const meta = h('p', { class: 'run-meta' });
  const base = `#/runs/${encodeURIComponent(runId)}`;
  const element = h(
    'header',
    { class: 'run-head' },
    h('p', { class: 'crumbs' }, h('a', { href: '#/runs' }, 'Runs'), ' / ', h('span', { class: 'mono' }, runId)),
    title,
    meta,
    h(
      'nav',
      { class: 'tabs', 'aria-label': 'Run views' },
      TABS.map(([suffix, label]) =>
        h('a', { href: `${base}${suffix}`, 'aria-current': suffix === active ? 'page' : null }, label),
      ),
    ),
  );
  return {
    element,
    update(run) {
      title.textContent = run.objective;
      const { done, total } = progressOf(run);
      replaceChildren(
        meta,
        statusBadge(run.status),
        h('span', { id: 'run-progress' }, ` ${done}/${total} steps done`),
        ` · revision ${run.revision}`,
        run.terminal ? h('span', { class: 'muted' }, ` · ${run.terminal.reason}`) : null,
        spendOf(run),
        budgetReplanOf(run),
      );
    },
  };
}
