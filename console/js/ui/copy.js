/** A button that copies a text (an id, a raw value) and says so for a moment. */
import { h } from '../dom.js';

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Without the clipboard API (an insecure origin), a hidden textarea and execCommand still work.
    const area = h('textarea', { class: 'visually-hidden', 'aria-hidden': 'true' });
    area.value = text;
    document.body.append(area);
    area.select();
    const done = document.execCommand('copy');
    area.remove();
    return done;
  }
}

export function copyButton(text, label = 'Copy') {
  const named = typeof text === 'string' ? `${label}: ${truncateLabel(text)}` : label;
  const button = h('button', { type: 'button', class: 'copy', 'aria-label': named }, 'Copy');
  button.title = label;
  button.addEventListener('click', async (event) => {
    event.stopPropagation();
    const ok = await copyText(typeof text === 'function' ? text() : text);
    button.textContent = ok ? 'Copied' : 'Not copied';
    button.dataset.copied = ok ? 'true' : 'false';
    setTimeout(() => {
      button.textContent = 'Copy';
      delete button.dataset.copied;
    }, 1200);
  });
  return button;
}

const truncateLabel = (text) => (typeof text === 'string' && text.length > 40 ? `${text.slice(0, 39)}…` : String(text));

/** An id in monospace with its copy button. */
export const idWithCopy = (id, label = 'Copy id') =>
  h('span', { class: 'id-copy' }, h('span', { class: 'mono' }, id), copyButton(id, label));
