/**
 * A run as a graph: the current plan laid out by ELK, nodes colored by status, clusters foldable (finished ones
 * folded at first), kept current by the run session (feed/run-session.js). Selecting a step opens its details beside
 * the graph. A large plan is shown as an overview of synthesized groups, all folded; opening one lays out only its
 * contents (dag/incremental.js). The graph zooms and pans (dag/viewport.js) with a minimap; buttons go to the next
 * failed, running or waiting step, and a step asked for (the address, a button, a click) is brought into view.
 */
import { groupParents, withOverviewGroups } from '../dag/collapse.js';
import { layout, relayout } from '../dag/layout.js';
import { defaultCollapsed, structureKey, visibleGraph } from '../dag/model.js';
import { legend, renderDag } from '../dag/view.js';
import { createViewport } from '../dag/viewport.js';
import { h, replaceChildren } from '../dom.js';
import { runSession } from '../feed/run-session.js';
import { runHeader } from './run-header.js';
import { stepPanel } from './step-panel.js';

/** What the "next" buttons look for, in plan order after the selected step. */
const FINDERS = [
  ['failed', 'Next failed', (s) => s.status === 'failed' || s.status === 'compensation_failed'],
  ['running', 'Next running', (s) => s.status === 'running' || s.status === 'retrying' || s.status === 'compensating'],
  ['waiting', 'Next waiting', (s) => s.status === 'awaiting_approval'],
];

function toolbar(viewport, goTo) {
  const button = (label, attrs, onclick) => h('button', { type: 'button', ...attrs, onclick }, label);
  return h(
    'div',
    { class: 'graph-tools', role: 'toolbar', 'aria-label': 'Graph view' },
    button('−', { 'aria-label': 'Zoom out', id: 'zoom-out' }, () => viewport.zoomOut()),
    button('+', { 'aria-label': 'Zoom in', id: 'zoom-in' }, () => viewport.zoomIn()),
    button('Fit', { id: 'zoom-fit' }, () => viewport.fit()),
    h('span', { class: 'tool-gap' }),
    FINDERS.map(([key, label]) => button(label, { id: `next-${key}`, dataset: { finder: key } }, () => goTo(key))),
  );
}

export function runPage(main, { runId, query }) {
  const header = runHeader(runId, '', { onActed: () => session.refresh() });
  const canvas = h('div', {
    class: 'dag-canvas',
    id: 'dag',
    tabindex: '0',
    'aria-label': 'Plan graph: drag or arrows to pan, wheel or + and − to zoom, 0 to fit',
  });
  canvas.append(h('p', { class: 'muted' }, 'Laying out the plan…'));
  const minimapHost = h('div', { class: 'minimap-host' });
  const viewport = createViewport(canvas, minimapHost);
  const panel = stepPanel(runId, () => selectStep(null), { onActed: () => session.refresh() });
  const status = h('p', { class: 'muted', role: 'status', id: 'run-status' });
  replaceChildren(
    main,
    header.element,
    h(
      'div',
      { class: 'run-body' },
      h(
        'section',
        { class: 'graph', 'aria-label': 'Plan graph' },
        toolbar(viewport, (key) => goTo(key)),
        h('div', { class: 'canvas-wrap' }, canvas, minimapHost),
        legend(),
        status,
      ),
      panel.element,
    ),
  );

  let collapsed;
  let key;
  let view;
  let graph;
  let laidOut;
  let revision;
  let shaped = [];
  let selected = query.get('step');
  let stopped = false;
  let drawing = Promise.resolve();

  function selectStep(id, returnFocus = false) {
    const previous = selected;
    selected = id;
    view?.select(id);
    if (id) {
      view?.reveal(id);
      void panel.show(id);
    } else {
      panel.hide();
      if (returnFocus && previous) view?.focus(previous);
    }
  }

  /** The groups between a step and the top, outermost first. */
  const ancestorsOf = (id) => {
    const parentOf = groupParents(shaped);
    const chain = [];
    for (let at = parentOf.get(id), hops = 0; at !== undefined && hops <= shaped.length; hops++) {
      chain.unshift(at);
      at = parentOf.get(at);
    }
    return chain;
  };

  /** Unfolds the folded groups around a step, one box at a time (each an incremental layout), then shows it. */
  async function bringOut(id) {
    for (const group of ancestorsOf(id)) {
      if (!collapsed.has(group)) continue;
      collapsed.delete(group);
      await redraw(group);
    }
    view?.reveal(id);
  }

  const onActivate = (node) => {
    if (node.kind === 'step') return selectStep(node.id);
    if (collapsed.has(node.id)) collapsed.delete(node.id);
    else collapsed.add(node.id);
    drawing = drawing.then(() => redraw(node.id, node.id));
  };

  async function goTo(finderKey) {
    const [, , wanted] = FINDERS.find(([k]) => k === finderKey);
    const leaves = shaped.filter((s) => s.target !== null);
    const start = Math.max(0, leaves.findIndex((s) => s.id === selected) + 1);
    const found = [...leaves.slice(start), ...leaves.slice(0, start)].find(wanted);
    if (!found) {
      status.textContent = `No ${finderKey} step.`;
      return;
    }
    status.textContent = '';
    drawing = drawing.then(() => bringOut(found.id));
    await drawing;
    selectStep(found.id);
    view?.focus(found.id);
  }

  /** Draws the graph again after a fold or unfold of `changed` (incrementally), or from scratch. */
  async function redraw(changed, focusId) {
    const next = visibleGraph(shaped, collapsed);
    const nextKey = structureKey(next);
    if (view && nextKey === key) {
      view.update(next);
      graph = next;
      return;
    }
    if (next.nodes.length === 0) return;
    const started = performance.now();
    const answer =
      changed && laidOut && graph ? await relayout(laidOut, graph, next, changed) : { laidOut: await layout(next) };
    if (stopped) return;
    canvas.dataset.layoutMs = String(Math.round(performance.now() - started));
    key = nextKey;
    graph = next;
    laidOut = answer.laidOut;
    view = renderDag(canvas, next, laidOut, onActivate, viewport);
    canvas.dataset.nodes = String(next.nodes.length);
    view.select(selected);
    if (focusId) view.focus(focusId);
  }

  async function draw(run) {
    shaped = withOverviewGroups(run.steps);
    if (!collapsed || run.revision !== revision) {
      collapsed = defaultCollapsed(shaped);
      revision = run.revision;
      laidOut = undefined;
      graph = undefined;
      if (selected) for (const group of ancestorsOf(selected)) collapsed.delete(group);
    }
    if (shaped.length === 0) {
      replaceChildren(
        canvas,
        h(
          'p',
          { class: 'muted' },
          run.status === 'planning'
            ? 'Planning…'
            : run.status === 'queued'
              ? "Queued: it starts when one of its tenant's running runs ends."
              : 'No plan yet.',
        ),
      );
      return;
    }
    await redraw();
  }

  let first = true;
  const session = runSession(runId, {
    onError: (error) =>
      replaceChildren(canvas, h('p', { class: 'error', role: 'alert' }, `Could not load the run: ${error.message}`)),
    onChange: ({ run, reason }) => {
      header.update(run);
      status.textContent =
        run.status === 'complete' || run.status === 'failed' || run.status === 'cancelled'
          ? `The run is ${run.status}.`
          : '';
      if (reason === 'head') return;
      drawing = drawing.then(async () => {
        await draw(run);
        if (first && selected) {
          first = false;
          view?.reveal(selected);
          void panel.show(selected);
        }
        first = false;
        if (selected) await panel.refresh(run);
      });
    },
  });
  void session.open();

  const onKey = (event) => {
    if (event.key === 'Escape' && selected && !document.querySelector('dialog[open]')) selectStep(null, true);
  };
  document.addEventListener('keydown', onKey);
  return {
    dispose() {
      stopped = true;
      session.stop();
      document.removeEventListener('keydown', onKey);
    },
  };
}
