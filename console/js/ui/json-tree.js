/**
 * A value as a foldable tree: objects and arrays are <details> (open to a depth, the rest folded), strings keep
 * their line breaks (a report reads as text, not as `\n\n`), and a field that reads as Markdown is rendered, with
 * Rendered / Raw / Copy. The whole value can be copied as JSON.
 */
import { h } from '../dom.js';
import { copyButton } from './copy.js';
import { looksLikeMarkdown, renderMarkdown } from './markdown.js';

const OPEN_DEPTH = 2;
/** Children shown at first under one node; the rest behind a "show more" button. */
const SHOWN = 200;

/** A Markdown text with a choice of Rendered (the default) or Raw, and a copy button. */
export function markdownView(text, label = 'Markdown') {
  const rendered = renderMarkdown(text);
  const raw = h('pre', { class: 'md-raw', hidden: true, tabindex: '0' }, text);
  const toggle = (showRaw) => {
    rendered.hidden = showRaw;
    raw.hidden = !showRaw;
    renderedTab.setAttribute('aria-pressed', String(!showRaw));
    rawTab.setAttribute('aria-pressed', String(showRaw));
  };
  const renderedTab = h('button', { type: 'button', 'aria-pressed': 'true', onclick: () => toggle(false) }, 'Rendered');
  const rawTab = h('button', { type: 'button', 'aria-pressed': 'false', onclick: () => toggle(true) }, 'Raw');
  return h(
    'div',
    { class: 'md-view', role: 'group', 'aria-label': label },
    h('div', { class: 'md-bar' }, renderedTab, rawTab, copyButton(text, `Copy ${label}`)),
    rendered,
    raw,
  );
}

function scalar(value) {
  if (value === null) return h('span', { class: 'j-null' }, 'null');
  if (typeof value === 'string') return h('span', { class: 'j-str' }, `"${value}"`);
  if (typeof value === 'number') return h('span', { class: 'j-num' }, String(value));
  if (typeof value === 'boolean') return h('span', { class: 'j-bool' }, String(value));
  return h('span', null, String(value));
}

function node(key, value, depth) {
  const name = key === undefined ? null : h('span', { class: 'j-key' }, `${key}: `);
  if (typeof value === 'string' && looksLikeMarkdown(value)) {
    return h('li', { class: 'j-md' }, name, markdownView(value, String(key ?? 'text')));
  }
  if (typeof value === 'string' && value.includes('\n')) {
    return h('li', null, name, h('pre', { class: 'j-text' }, value));
  }
  if (value === null || typeof value !== 'object') return h('li', null, name, scalar(value));
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const brackets = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) return h('li', null, name, `${brackets[0]}${brackets[1]}`);
  const list = h('ul', { class: 'j-children' });
  const more = (from) => {
    for (const [k, v] of entries.slice(from, from + SHOWN)) list.append(node(k, v, depth + 1));
    if (entries.length > from + SHOWN) {
      const button = h('button', { type: 'button', class: 'j-more' }, `Show ${entries.length - from - SHOWN} more`);
      button.addEventListener('click', () => {
        button.parentElement.remove();
        more(from + SHOWN);
      });
      list.append(h('li', null, button));
    }
  };
  more(0);
  const count = Array.isArray(value) ? `${entries.length} items` : `${entries.length} fields`;
  return h(
    'li',
    null,
    h(
      'details',
      { open: depth < OPEN_DEPTH },
      h(
        'summary',
        null,
        name,
        h('span', { class: 'j-brace' }, `${brackets[0]} `),
        h('span', { class: 'muted' }, count),
        ` ${brackets[1]}`,
      ),
      list,
    ),
  );
}

/** The tree of `value`, labelled, with a Copy JSON button. */
export function jsonTree(value, label = 'JSON') {
  if (value === undefined) return h('p', { class: 'muted' }, '—');
  if (typeof value === 'string' && looksLikeMarkdown(value)) return markdownView(value, label);
  return h(
    'div',
    { class: 'json-tree', role: 'group', 'aria-label': label },
    h(
      'div',
      { class: 'j-bar' },
      copyButton(() => JSON.stringify(value, null, 2), `Copy ${label} as JSON`),
    ),
    h('ul', { class: 'j-root' }, node(undefined, value, 0)),
  );
}
