/**
 * Draws a laid-out DAG as SVG: clusters, then edges, then nodes of a fixed size, so a status change only swaps a
 * class and a label (no layout shift). Every node is focusable; Enter or Space opens a step or folds a cluster.
 */
import { h, STATUS_MARKS, s, statusLabel, truncate } from '../dom.js';
import { GROUP_HEADER, NODE_HEIGHT, NODE_WIDTH } from './model.js';

const TITLE_CHARS = 27;

const kindOf = (step) => (step.target === null ? 'group' : step.target.slice(0, step.target.indexOf(':')));

/** The statuses of a group's leaves, most frequent first: "✓ 40 ▶ 3 ✗ 1". */
export function countsText(counts, limit = 4) {
  return Object.entries(counts ?? {})
    .filter(([, n]) => n > 0)
    .sort(([, a], [, b]) => b - a)
    .slice(0, limit)
    .map(([status, n]) => `${STATUS_MARKS[status] ?? status} ${n}`)
    .join(' ');
}

const leavesOf = (node) => Object.values(node.counts ?? {}).reduce((sum, n) => sum + n, 0);

function nodeLabel(node) {
  const step = node.step;
  if (node.kind === 'step') return `Step ${step.title} (${step.id}), ${statusLabel(step.status)}, ${step.target}`;
  const verb = node.kind === 'folded' ? 'folded, press Enter to unfold' : 'press Enter to fold';
  const statuses = Object.entries(node.counts ?? {})
    .map(([status, n]) => `${n} ${statusLabel(status)}`)
    .join(', ');
  const name = step.virtual ? step.title : `${step.title} (${step.id})`;
  return `Group ${name}, ${statusLabel(step.status)}, ${leavesOf(node)} steps (${statuses}), ${verb}`;
}

function metaText(node) {
  const step = node.step;
  const mark = STATUS_MARKS[step.status] ?? '';
  if (node.kind === 'step') {
    const tries = step.attempts > 1 ? ` · ${step.attempts} tries` : '';
    return `${mark} ${statusLabel(step.status)} · ${kindOf(step)}${tries}`;
  }
  // A large group says how its steps stand; a small one keeps the plain "n inside".
  if (leavesOf(node) > node.size || step.virtual) return `${leavesOf(node)} steps · ${countsText(node.counts)}`;
  return `${mark} ${statusLabel(step.status)} · ${node.size} inside`;
}

function stepNode(node, box) {
  const folded = node.kind === 'folded';
  return s(
    'g',
    {
      class: ['node', `status-${node.step.status}`, folded ? 'folded' : null],
      transform: `translate(${box.x},${box.y})`,
      tabindex: '0',
      role: 'button',
      'aria-label': nodeLabel(node),
      dataset: { id: node.id, kind: node.kind },
    },
    s('title', null, `${node.step.title}\n${node.id}`),
    folded ? s('rect', { class: 'shadow', x: 5, y: 5, width: NODE_WIDTH, height: NODE_HEIGHT, rx: 7 }) : null,
    s('rect', { class: 'frame', width: NODE_WIDTH, height: NODE_HEIGHT, rx: 7 }),
    s('rect', { class: 'band', width: 7, height: NODE_HEIGHT, rx: 3 }),
    s('text', { class: 'title', x: 16, y: 24 }, `${folded ? '▸ ' : ''}${truncate(node.step.title, TITLE_CHARS)}`),
    s('text', { class: 'meta', x: 16, y: 45 }, metaText(node)),
  );
}

function clusterNode(node, box) {
  return s(
    'g',
    { class: ['cluster', `status-${node.step.status}`], dataset: { id: node.id, kind: node.kind } },
    s('rect', { class: 'cluster-frame', x: box.x, y: box.y, width: box.width, height: box.height, rx: 9 }),
    s(
      'g',
      {
        class: 'cluster-head',
        tabindex: '0',
        role: 'button',
        'aria-label': nodeLabel(node),
        'aria-expanded': 'true',
        dataset: { id: node.id, kind: node.kind },
        transform: `translate(${box.x},${box.y})`,
      },
      s('rect', { class: 'cluster-bar', width: box.width, height: GROUP_HEADER, rx: 9 }),
      s('text', { class: 'title', x: 12, y: 22 }, `▾ ${truncate(node.step.title, Math.floor(box.width / 8) - 4)}`),
      s('text', { class: 'meta', x: box.width - 12, y: 22, 'text-anchor': 'end' }, metaText(node)),
    ),
  );
}

const pathOf = (points) => points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');

/**
 * Renders into `container` and returns { update(graph), focus(id), select(id), reveal(id) }. `onActivate(node)` is
 * called for a click, Enter or Space on a node or cluster head. The drawing sits in one group that `viewport`
 * (viewport.js) zooms and pans; the svg itself fills the canvas.
 */
export function renderDag(container, graph, laidOut, onActivate, viewport) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const edgeCount = new Map(graph.edges.map((e) => [e.id, e.count ?? 1]));
  const clusters = graph.nodes
    .filter((n) => n.kind === 'group' && laidOut.boxes.has(n.id))
    .sort((a, b) => laidOut.boxes.get(a.id).depth - laidOut.boxes.get(b.id).depth);
  const leaves = graph.nodes.filter((n) => n.kind !== 'group' && laidOut.boxes.has(n.id));
  const content = s(
    'g',
    { class: 'viewport-content' },
    s(
      'g',
      { class: 'clusters' },
      clusters.map((n) => clusterNode(n, laidOut.boxes.get(n.id))),
    ),
    s(
      'g',
      { class: 'edges' },
      laidOut.edges.map((e) => {
        const count = edgeCount.get(e.id) ?? 1;
        return s(
          'path',
          {
            class: ['edge', count > 1 ? 'bundle' : null],
            d: pathOf(e.points),
            'marker-end': 'url(#arrow)',
            dataset: { count: String(count) },
          },
          count > 1 ? s('title', null, `${count} dependencies`) : null,
        );
      }),
    ),
    s(
      'g',
      { class: 'nodes' },
      leaves.map((n) => stepNode(n, laidOut.boxes.get(n.id))),
    ),
  );
  const svg = s(
    'svg',
    {
      class: 'dag',
      width: '100%',
      height: '100%',
      role: 'group',
      'aria-label': `Plan graph, ${leaves.length} nodes`,
      dataset: { width: String(Math.ceil(laidOut.width)), height: String(Math.ceil(laidOut.height)) },
    },
    s(
      'defs',
      null,
      s(
        'marker',
        { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto' },
        s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }),
      ),
    ),
    content,
  );
  const activate = (target) => {
    const element = target.closest('[data-id][tabindex]');
    if (!element) return;
    const node = byId.get(element.dataset.id);
    if (node) onActivate(node, element);
  };
  svg.addEventListener('click', (event) => activate(event.target));
  svg.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' && event.key !== ' ') return;
    event.preventDefault();
    activate(event.target);
  });
  container.replaceChildren(svg);
  viewport?.attach(content, laidOut, laidOut.boxes);
  for (const node of graph.nodes) viewport?.status(node.id, node.step.status);

  const elementsOf = (id) => svg.querySelectorAll(`[data-id="${CSS.escape(id)}"]`);
  // What each node shows now: the step objects may change under the view, the drawing only by update().
  const drawn = new Map(graph.nodes.map((n) => [n.id, { status: n.step.status, meta: metaText(n) }]));
  return {
    svg,
    /** New statuses (same structure): classes and labels only. */
    update(nextGraph) {
      for (const node of nextGraph.nodes) {
        if (!byId.has(node.id)) continue;
        byId.set(node.id, node);
        viewport?.status(node.id, node.step.status);
        const was = drawn.get(node.id);
        const meta = metaText(node);
        if (was.status === node.step.status && was.meta === meta) continue;
        drawn.set(node.id, { status: node.step.status, meta });
        for (const element of elementsOf(node.id)) {
          element.classList.remove(`status-${was.status}`);
          element.classList.add(`status-${node.step.status}`);
          if (element.hasAttribute('tabindex')) element.setAttribute('aria-label', nodeLabel(node));
          const text = element.querySelector('.meta');
          if (text) text.textContent = meta;
        }
      }
    },
    focus(id) {
      const element = [...elementsOf(id)].find((e) => e.hasAttribute('tabindex'));
      element?.focus({ preventScroll: true });
    },
    select(id) {
      for (const element of svg.querySelectorAll('.selected')) element.classList.remove('selected');
      if (id) for (const element of elementsOf(id)) element.classList.add('selected');
    },
    /** Brings a node into view (zooming in if the graph is too small to read there). */
    reveal(id) {
      const box = laidOut.boxes.get(id);
      if (box) viewport?.reveal(box);
    },
  };
}

/** The status legend under the graph. */
export function legend() {
  const statuses = [
    'pending',
    'ready',
    'running',
    'retrying',
    'awaiting_approval',
    'succeeded',
    'failed',
    'blocked',
    'skipped',
    'superseded',
    'cancelled',
    'compensating',
    'compensated',
    'compensation_failed',
  ];
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Status colors' },
    statuses.map((status) =>
      h(
        'li',
        null,
        h('span', { class: ['swatch', `status-${status}`] }),
        `${STATUS_MARKS[status]} ${statusLabel(status)}`,
      ),
    ),
  );
}
