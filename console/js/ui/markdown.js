/**
 * A small Markdown renderer that builds DOM nodes, never HTML text: headings, paragraphs, lists (nested by indent),
 * block quotes, fenced code, rules, GitHub tables, and inline code, bold, italics, links and bare URLs. Nothing a
 * report contains can become markup or script: every piece of text lands in a text node, and a link keeps only an
 * http(s) or mailto address (anything else stays text). What it does not know stays visible as text.
 */
import { h } from '../dom.js';

const SAFE_LINK = /^(https?:\/\/|mailto:)/i;
const INLINE =
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*?)\*|_([^_\s][^_]*?)_|\[([^\]]+)\]\(([^)\s]+)\)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/g;

/** Inline Markdown of one block's text as nodes. */
export function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] !== undefined) out.push(h('code', null, m[2].trim()));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(h('strong', null, inline(m[3] ?? m[4])));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(h('em', null, inline(m[5] ?? m[6])));
    else if (m[7] !== undefined) out.push(SAFE_LINK.test(m[8]) ? link(m[8], inline(m[7])) : m[0]);
    else out.push(link(m[9], m[9]));
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const link = (href, content) => h('a', { href, rel: 'noopener noreferrer nofollow', target: '_blank' }, content);

const cells = (row) =>
  row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());

const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;

/** A list starting at `lines[i]`; nested lists by deeper indent. Returns [element, next line]. */
function list(lines, i) {
  const first = LIST_ITEM.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const items = [];
  while (i < lines.length) {
    const m = LIST_ITEM.exec(lines[i]);
    if (!m || m[1].length < indent) break;
    if (m[1].length > indent) {
      const [nested, next] = list(lines, i);
      items.at(-1)?.append(nested);
      i = next;
      continue;
    }
    items.push(h('li', null, inline(m[3])));
    i++;
    // A continuation line (indented text, not a new item) belongs to the item above.
    while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !LIST_ITEM.test(lines[i])) {
      items.at(-1).append(' ', ...inline(lines[i].trim()));
      i++;
    }
  }
  return [h(ordered ? 'ol' : 'ul', null, items), i];
}

const isBlockStart = (line) =>
  /^(#{1,6})\s/.test(line) || /^```/.test(line) || /^>\s?/.test(line) || LIST_ITEM.test(line) || /^\|/.test(line);

/** The rendered blocks of a Markdown text, as a <div class="markdown">. */
export function renderMarkdown(text) {
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '') {
      i++;
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      blocks.push(h(`h${heading[1].length}`, null, inline(heading[2])));
      i++;
    } else if (/^```/.test(line)) {
      const body = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) body.push(lines[i]);
      i++;
      blocks.push(h('pre', null, h('code', null, body.join('\n'))));
    } else if (/^(\s*[-*_]\s*){3,}$/.test(line)) {
      blocks.push(h('hr'));
      i++;
    } else if (/^>\s?/.test(line)) {
      const quoted = [];
      for (; i < lines.length && /^>\s?/.test(lines[i]); i++) quoted.push(lines[i].replace(/^>\s?/, ''));
      blocks.push(h('blockquote', null, renderMarkdown(quoted.join('\n')).childNodes));
    } else if (LIST_ITEM.test(line)) {
      const [element, next] = list(lines, i);
      blocks.push(element);
      i = next;
    } else if (/^\|.*\|\s*$/.test(line) && /^\|?\s*:?-{3,}/.test(lines[i + 1] ?? '')) {
      const head = cells(line);
      const rows = [];
      for (i += 2; i < lines.length && /^\|/.test(lines[i]); i++) rows.push(cells(lines[i]));
      blocks.push(
        h(
          'div',
          { class: 'md-table' },
          h(
            'table',
            null,
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                head.map((c) => h('th', { scope: 'col' }, inline(c))),
              ),
            ),
            h(
              'tbody',
              null,
              rows.map((r) =>
                h(
                  'tr',
                  null,
                  r.map((c) => h('td', null, inline(c))),
                ),
              ),
            ),
          ),
        ),
      );
    } else {
      const para = [line.trim()];
      for (i++; i < lines.length && lines[i].trim() !== '' && !isBlockStart(lines[i]); i++) para.push(lines[i].trim());
      blocks.push(h('p', null, inline(para.join(' '))));
    }
  }
  return h('div', { class: 'markdown' }, blocks);
}

/** Whether a string reads as Markdown worth rendering: several lines with a heading, a list or emphasis. */
export function looksLikeMarkdown(value) {
  if (typeof value !== 'string' || value.length < 20 || !value.includes('\n')) return false;
  return /(^|\n)(#{1,6}\s|[-*+]\s|\d+\.\s|>\s|```|\|.*\|)|\*\*[^*]+\*\*/.test(value);
}
