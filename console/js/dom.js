/**
 * Small DOM helpers: elements are built with textContent and attributes only (never innerHTML), so nothing a plan,
 * a step output or an error message contains can become markup.
 */
const SVG_NS = 'http://www.w3.org/2000/svg';

function append(parent, children) {
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
}

function assign(element, attrs) {
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'class')
      element.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  return element;
}

/** An HTML element: h('a', { href: '#/runs' }, 'Runs'). */
export function h(tag, attrs, ...children) {
  const element = assign(document.createElement(tag), attrs);
  append(element, children);
  return element;
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  const element = assign(document.createElementNS(SVG_NS, tag), attrs);
  append(element, children);
  return element;
}

export function replaceChildren(parent, ...children) {
  parent.replaceChildren();
  append(parent, children);
  return parent;
}

const pad = (n) => String(n).padStart(2, '0');

/** 2024-05-01 14:03:22 in the reader's time zone; '—' when absent. */
export function formatTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '—';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** 350 ms, 4.2 s, 3 min 5 s, 2 h 10 min. */
export function formatDuration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

export const between = (from, to) => (from ? (to ? Date.parse(to) : Date.now()) - Date.parse(from) : null);

/** "in 4 min", "2 min ago". */
export function relative(iso, now = Date.now()) {
  const delta = Date.parse(iso) - now;
  const text = formatDuration(Math.abs(delta));
  return delta >= 0 ? `in ${text}` : `${text} ago`;
}

export const STATUS_MARKS = {
  queued: '⧗',
  planning: '…',
  pending: '○',
  ready: '•',
  running: '▶',
  retrying: '↻',
  awaiting_approval: '?',
  paused: '‖',
  succeeded: '✓',
  complete: '✓',
  failed: '✗',
  skipped: '·',
  blocked: '⊘',
  superseded: '✎',
  cancelled: '■',
  compensating: '↶',
  compensated: '↺',
  compensation_failed: '⚠',
};

export const statusLabel = (status) => String(status).replaceAll('_', ' ');

export function statusBadge(status) {
  return h('span', { class: ['badge', `status-${status}`] }, `${STATUS_MARKS[status] ?? ''} ${statusLabel(status)}`);
}

/** Pretty JSON in a <pre>; long values stay scrollable. */
export function jsonBlock(value, label) {
  const text = value === undefined ? '—' : JSON.stringify(value, null, 2);
  return h('pre', { class: 'json', tabindex: '0', 'aria-label': label ?? 'JSON' }, text);
}

export function truncate(text, max) {
  const value = String(text);
  return value.length > max ? `${value.slice(0, max - 1)}…` : value;
}

/** A definition list from [term, description] pairs (descriptions may be nodes). */
export function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.filter(Boolean).map(([term, description]) => [h('dt', null, term), h('dd', null, description)]),
  );
}
