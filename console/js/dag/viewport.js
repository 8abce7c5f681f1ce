/**
 * Zoom and pan over a drawn graph, and its minimap. The graph's <svg> fills the canvas; its content sits in one
 * <g> whose transform is the view (`scale` and `x`, `y`, in screen pixels). The wheel zooms about the pointer, a drag
 * on the background pans, keys do both (+ − 0 and arrows), Fit shows the whole graph, and the minimap shows where
 * the view is (a click or a drag there moves it). The view survives redrawing: unfolding a box keeps it.
 */
import { s } from '../dom.js';

const MIN_SCALE = 0.04;
const MAX_SCALE = 2.5;
const STEP = 1.25;
const PAN = 80;
const MINIMAP_WIDTH = 200;
const MINIMAP_HEIGHT = 120;

const clamp = (value, lo, hi) => Math.min(hi, Math.max(lo, value));

export function createViewport(canvas, minimapHost) {
  let content;
  let size = { width: 1, height: 1 };
  let view = { scale: 1, x: 0, y: 0 };
  let fitted = false;
  // Until the reader zooms or pans, the view follows the canvas's size (a panel opening beside it): fitted again.
  let auto = true;
  new ResizeObserver(() => {
    if (auto && content) fitAll();
  }).observe(canvas);
  let listeners = [];
  const minimap = s('svg', { class: 'minimap', role: 'img', 'aria-label': 'Minimap of the plan graph' });
  const miniContent = s('g');
  const miniView = s('rect', { class: 'minimap-view' });
  minimap.append(miniContent, miniView);
  minimapHost?.append(minimap);

  const bounds = () => ({ width: canvas.clientWidth || 800, height: canvas.clientHeight || 400 });

  function apply() {
    if (!content) return;
    content.setAttribute('transform', `translate(${view.x},${view.y}) scale(${view.scale})`);
    const { width, height } = bounds();
    const k = Math.min(MINIMAP_WIDTH / size.width, MINIMAP_HEIGHT / size.height);
    miniContent.setAttribute('transform', `scale(${k})`);
    miniView.setAttribute('x', String((-view.x / view.scale) * k));
    miniView.setAttribute('y', String((-view.y / view.scale) * k));
    miniView.setAttribute('width', String((width / view.scale) * k));
    miniView.setAttribute('height', String((height / view.scale) * k));
    canvas.dataset.scale = view.scale.toFixed(3);
    for (const listener of listeners) listener(view);
  }

  function zoomAt(factor, px, py) {
    auto = false;
    const scale = clamp(view.scale * factor, MIN_SCALE, MAX_SCALE);
    const k = scale / view.scale;
    view = { scale, x: px - (px - view.x) * k, y: py - (py - view.y) * k };
    apply();
  }

  function fitAll() {
    const { width, height } = bounds();
    const scale = clamp(Math.min((width - 16) / size.width, (height - 16) / size.height, 1), MIN_SCALE, MAX_SCALE);
    view = { scale, x: (width - size.width * scale) / 2, y: Math.max(8, (height - size.height * scale) / 2) };
    apply();
  }

  /** Moves the view so that `box` (graph coordinates) is in sight, centred when it was not. */
  function reveal(box) {
    const { width, height } = bounds();
    const left = view.x + box.x * view.scale;
    const top = view.y + box.y * view.scale;
    const inside =
      left >= 0 && top >= 0 && left + box.width * view.scale <= width && top + box.height * view.scale <= height;
    if (inside) return;
    auto = false;
    // Too small to read is no better than out of sight.
    const scale = Math.max(view.scale, Math.min(1, 0.6));
    view = {
      scale,
      x: width / 2 - (box.x + box.width / 2) * scale,
      y: height / 2 - (box.y + box.height / 2) * scale,
    };
    apply();
  }

  canvas.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      const rect = canvas.getBoundingClientRect();
      zoomAt(event.deltaY < 0 ? STEP : 1 / STEP, event.clientX - rect.left, event.clientY - rect.top);
    },
    { passive: false },
  );

  let drag;
  canvas.addEventListener('pointerdown', (event) => {
    if (event.button !== 0 || event.target.closest?.('[tabindex]')) return;
    auto = false;
    drag = { x: event.clientX, y: event.clientY, view };
    canvas.setPointerCapture(event.pointerId);
    canvas.classList.add('panning');
  });
  canvas.addEventListener('pointermove', (event) => {
    if (!drag) return;
    view = { ...drag.view, x: drag.view.x + event.clientX - drag.x, y: drag.view.y + event.clientY - drag.y };
    apply();
  });
  const endDrag = () => {
    drag = undefined;
    canvas.classList.remove('panning');
  };
  canvas.addEventListener('pointerup', endDrag);
  canvas.addEventListener('pointercancel', endDrag);

  canvas.addEventListener('keydown', (event) => {
    if (event.target.closest?.('input, textarea, select')) return;
    const { width, height } = bounds();
    const keys = {
      '+': () => zoomAt(STEP, width / 2, height / 2),
      '=': () => zoomAt(STEP, width / 2, height / 2),
      '-': () => zoomAt(1 / STEP, width / 2, height / 2),
      0: fitAll,
      ArrowLeft: () => pan(PAN, 0),
      ArrowRight: () => pan(-PAN, 0),
      ArrowUp: () => pan(0, PAN),
      ArrowDown: () => pan(0, -PAN),
    };
    const act = keys[event.key];
    if (!act || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    act();
  });

  function pan(dx, dy) {
    auto = false;
    view = { ...view, x: view.x + dx, y: view.y + dy };
    apply();
  }

  const fromMinimap = (event) => {
    auto = false;
    const rect = minimap.getBoundingClientRect();
    const k = Math.min(MINIMAP_WIDTH / size.width, MINIMAP_HEIGHT / size.height);
    const gx = (event.clientX - rect.left) / k;
    const gy = (event.clientY - rect.top) / k;
    const { width, height } = bounds();
    view = { ...view, x: width / 2 - gx * view.scale, y: height / 2 - gy * view.scale };
    apply();
  };
  let miniDrag = false;
  minimap.addEventListener('pointerdown', (event) => {
    miniDrag = true;
    minimap.setPointerCapture(event.pointerId);
    fromMinimap(event);
  });
  minimap.addEventListener('pointermove', (event) => miniDrag && fromMinimap(event));
  minimap.addEventListener('pointerup', () => {
    miniDrag = false;
  });

  return {
    /** Takes a newly drawn graph: its content group and size; the first one is fitted. */
    attach(group, graphSize, boxes) {
      content = group;
      size = { width: Math.max(1, graphSize.width), height: Math.max(1, graphSize.height) };
      minimap.setAttribute('viewBox', `0 0 ${MINIMAP_WIDTH} ${MINIMAP_HEIGHT}`);
      minimap.setAttribute('width', String(MINIMAP_WIDTH));
      minimap.setAttribute('height', String(MINIMAP_HEIGHT));
      miniContent.replaceChildren(
        ...[...boxes].map(([id, box]) =>
          s('rect', { x: box.x, y: box.y, width: box.width, height: box.height, dataset: { id } }),
        ),
      );
      if (!fitted) {
        fitted = true;
        fitAll();
      } else apply();
    },
    /** Colours the minimap's boxes like the graph's. */
    status(id, status) {
      const rect = miniContent.querySelector(`[data-id="${CSS.escape(id)}"]`);
      if (rect) rect.setAttribute('class', `status-${status}`);
    },
    zoomIn: () => zoomAt(STEP, bounds().width / 2, bounds().height / 2),
    zoomOut: () => zoomAt(1 / STEP, bounds().width / 2, bounds().height / 2),
    fit: fitAll,
    reveal,
    get view() {
      return view;
    },
    onChange(listener) {
      listeners = [...listeners, listener];
    },
  };
}
