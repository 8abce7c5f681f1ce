/**
 * A run as a graph: the current plan laid out by ELK, nodes colored by status, clusters foldable (finished ones
 * folded at first), polled while the run moves. Selecting a step opens its details beside the graph. A large plan
 * (every page of its steps is read) is shown as an overview: wide sets of siblings split into synthesized groups,
 * all folded, so at most about a hundred boxes are laid out until someone unfolds one.
 */
import { getRun } from '../api.js';
import { getConfig } from '../auth.js';
import { groupParents, withOverviewGroups } from '../dag/collapse.js';
import { layout } from '../dag/layout.js';
import { defaultCollapsed, structureKey, visibleGraph } from '../dag/model.js';
import { legend, renderDag } from '../dag/view.js';
import { h, replaceChildren } from '../dom.js';
import { poll, TERMINAL_RUN } from '../poll.js';
import { runHeader } from './run-header.js';
import { stepPanel } from './step-panel.js';

export function runPage(main, { runId, query }) {
  const header = runHeader(runId, '');
  const canvas = h('div', { class: 'dag-canvas', id: 'dag' }, h('p', { class: 'muted' }, 'Laying out the plan…'));
  const panel = stepPanel(runId, () => selectStep(null));
  const status = h('p', { class: 'muted', role: 'status', id: 'run-status' });
  replaceChildren(
    main,
    header.element,
    h(
      'div',
      { class: 'run-body' },
      h('section', { class: 'graph', 'aria-label': 'Plan graph' }, canvas, legend(), status),
      panel.element,
    ),
  );

  let collapsed;
  let key;
  let view;
  let revision;
  let selected = query.get('step');
  let stopped = false;

  function selectStep(id, returnFocus = false) {
    const previous = selected;
    selected = id;
    view?.select(id);
    if (id) void panel.show(id);
    else {
      panel.hide();
      if (returnFocus && previous) view?.focus(previous);
    }
  }

  const onActivate = (node) => {
    if (node.kind === 'step') return selectStep(node.id);
    if (collapsed.has(node.id)) collapsed.delete(node.id);
    else collapsed.add(node.id);
    void draw(lastRun, node.id);
  };

  /** A step asked for by the URL is shown even when it sits in a folded group. */
  const unfoldAround = (steps, id) => {
    const parentOf = groupParents(steps);
    for (let at = parentOf.get(id), hops = 0; at !== undefined && hops <= steps.length; hops++) {
      collapsed.delete(at);
      at = parentOf.get(at);
    }
  };

  let lastRun;
  async function draw(run, focusId) {
    lastRun = run;
    const steps = withOverviewGroups(run.steps);
    if (!collapsed || run.revision !== revision) {
      collapsed = defaultCollapsed(steps);
      revision = run.revision;
      if (selected) unfoldAround(steps, selected);
    }
    const graph = visibleGraph(steps, collapsed);
    const nextKey = structureKey(graph);
    if (view && nextKey === key) {
      view.update(graph);
      return;
    }
    if (graph.nodes.length === 0) {
      replaceChildren(canvas, h('p', { class: 'muted' }, run.status === 'planning' ? 'Planning…' : 'No plan yet.'));
      return;
    }
    const laidOut = await layout(graph);
    if (stopped) return;
    key = nextKey;
    view = renderDag(canvas, graph, laidOut, onActivate);
    view.select(selected);
    if (focusId) view.focus(focusId);
  }

  const refresh = async () => {
    const run = await getRun(runId);
    if (stopped) return false;
    header.update(run);
    await draw(run);
    if (selected) await panel.refresh(run);
    status.textContent = TERMINAL_RUN.has(run.status) ? `The run is ${run.status}.` : '';
    return !TERMINAL_RUN.has(run.status);
  };

  const onKey = (event) => {
    if (event.key === 'Escape' && selected) selectStep(null, true);
  };
  document.addEventListener('keydown', onKey);

  let timer;
  refresh()
    .then((again) => {
      if (selected) void panel.show(selected);
      if (again) timer = poll(refresh, getConfig().pollMs);
    })
    .catch((error) => {
      replaceChildren(canvas, h('p', { class: 'error', role: 'alert' }, `Could not load the run: ${error.message}`));
    });
  return {
    dispose() {
      stopped = true;
      timer?.stop();
      document.removeEventListener('keydown', onKey);
    },
  };
}
