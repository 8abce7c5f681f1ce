/**
 * The confirm dialog of every action: a modal <dialog> with the question, the action's fields, Cancel and the
 * action's button. `run(form)` does the work; a refusal from the server is shown in the dialog in its own words
 * (code and message) and the dialog stays open, so nothing fails silently.
 */

import { refusalText } from '../api.js';
import { h } from '../dom.js';

/**
 * Opens the dialog. `fields` are nodes; `run(dialogElement)` returns what to say once done (the dialog closes and
 * `onDone(message)` gets it) or throws. Resolves when the dialog closes.
 */
export function confirmAction({ title, body, fields = [], confirmLabel, danger = false, run, onDone }) {
  const message = h('p', { class: 'dialog-message', role: 'alert' });
  const confirm = h('button', { type: 'submit', class: danger ? 'danger' : 'primary', value: 'confirm' }, confirmLabel);
  const cancel = h('button', { type: 'button', value: 'cancel' }, 'Cancel');
  const form = h(
    'form',
    { method: 'dialog' },
    h('h2', null, title),
    body ? h('p', null, body) : null,
    fields,
    message,
    h('div', { class: 'actions' }, cancel, confirm),
  );
  const dialog = h('dialog', { class: 'confirm', 'aria-label': title }, form);
  document.body.append(dialog);
  return new Promise((resolve) => {
    const close = () => {
      dialog.close();
      dialog.remove();
      resolve();
    };
    cancel.addEventListener('click', close);
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      close();
    });
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      confirm.disabled = true;
      cancel.disabled = true;
      message.className = 'dialog-message';
      message.textContent = 'Sending…';
      try {
        const done = await run(dialog);
        close();
        onDone?.(done);
      } catch (error) {
        message.className = 'dialog-message error';
        message.textContent = error.userMessage ?? refusalText(error);
        confirm.disabled = false;
        cancel.disabled = false;
      }
    });
    dialog.showModal();
    (fields.length ? dialog.querySelector('input, textarea, select') : cancel)?.focus();
  });
}

/** A labelled field for a dialog: `h('textarea'|'input', attrs)` with its label above. */
export function field(label, control, hint) {
  return h(
    'label',
    { class: 'field' },
    h('span', null, label),
    control,
    hint ? h('small', { class: 'muted' }, hint) : null,
  );
}

/** An error whose text is said as it is (a check the page made before sending). */
export function userError(text) {
  const error = new Error(text);
  error.userMessage = text;
  return error;
}
