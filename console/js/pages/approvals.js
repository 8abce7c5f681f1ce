/**
 * The approvals inbox: every pending approval with its question, the step's input and upstream outputs (and, for a
 * review, the held result), and the deadline. Approve, reject, or edit the output: an edit is parsed and checked
 * against the step's outputSchema by the server's dry run (`POST /approvals/{id}/check`, the same check a decision
 * gets) before anything is sent. A lost race (409) and an expired approval (410) are said plainly.
 */
import { ApiFailure, get, post } from '../api.js';
import { getConfig } from '../auth.js';
import { formatTime, h, jsonBlock, relative, replaceChildren } from '../dom.js';
import { poll } from '../poll.js';
import { idWithCopy } from '../ui/copy.js';
import { jsonTree } from '../ui/json-tree.js';
import { looksLikeMarkdown } from '../ui/markdown.js';

const DONE = { approve: 'Approved', reject: 'Rejected', edit: 'Edited and approved' };

function outcomeOf(error) {
  if (!(error instanceof ApiFailure)) return { text: `The decision could not be sent: ${error.message}`, final: false };
  if (error.status === 409)
    return { text: `Already decided: someone else decided this approval first — ${error.message}.`, final: true };
  if (error.status === 410) return { text: `Expired: ${error.message}. Your decision was not recorded.`, final: true };
  if (error.status === 422) {
    const details = Array.isArray(error.details) ? ` ${error.details.join('; ')}` : '';
    return { text: `Refused: ${error.message}.${details}`, final: false };
  }
  return { text: `The API answered ${error.status}: ${error.message}`, final: false };
}

/** What the editor starts with: the held result of a review, or an object with the schema's required fields. */
function starter(approval, schema) {
  if (approval.heldOutput !== undefined) return approval.heldOutput;
  const out = {};
  for (const name of schema?.required ?? []) {
    const type = schema.properties?.[name]?.type;
    out[name] =
      type === 'boolean'
        ? true
        : type === 'number' || type === 'integer'
          ? 0
          : type === 'array'
            ? []
            : type === 'object'
              ? {}
              : '';
  }
  return out;
}

function card(approval, context, onDecided) {
  const id = approval.approvalId;
  const domId = `a-${id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const result = h('p', { class: 'result', role: 'alert', id: `${domId}-result` });
  const checkList = h('ul', { class: 'check-errors', role: 'alert', id: `${domId}-errors` });
  const comment = h('textarea', { id: `${domId}-comment`, rows: '2', maxlength: '2000', name: 'comment' });
  const editor = h('textarea', {
    id: `${domId}-output`,
    class: 'json-editor',
    rows: '8',
    spellcheck: 'false',
    name: 'output',
    'aria-describedby': `${domId}-errors`,
  });
  const start = starter(approval, context.step?.outputSchema);
  // The long texts of a held result (a report) are edited as text, with real line breaks; the rest as JSON.
  const texts =
    approval.heldOutput !== undefined && start && typeof start === 'object' && !Array.isArray(start)
      ? Object.entries(start).filter(([, value]) => looksLikeMarkdown(value))
      : [];
  const textEditors = texts.map(([name, value]) => {
    const area = h('textarea', {
      id: `${domId}-text-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`,
      class: 'text-editor',
      rows: '14',
      name,
      dataset: { field: name },
    });
    area.value = value;
    return area;
  });
  const rest = texts.length
    ? Object.fromEntries(Object.entries(start).filter(([k]) => !texts.some(([n]) => n === k)))
    : start;
  editor.value = JSON.stringify(rest, null, 2);
  /** The edited output: the JSON editor's object with the text fields put back. */
  const edited = () => {
    const parsed = JSON.parse(editor.value);
    if (textEditors.length === 0) return parsed;
    const out = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? { ...parsed } : {};
    for (const area of textEditors) out[area.dataset.field] = area.value;
    return out;
  };
  const buttons = [];
  const button = (label, attrs, action) => {
    const b = h('button', { type: 'button', ...attrs, onclick: () => void action() }, label);
    buttons.push(b);
    return b;
  };
  const editArea = h(
    'div',
    { class: 'edit-area', hidden: true },
    textEditors.map((area) => [h('label', { for: area.id }, `${area.dataset.field} (the held text, Markdown)`), area]),
    h('label', { for: editor.id }, textEditors.length ? 'The other fields (JSON)' : 'Corrected output (JSON)'),
    editor,
    checkList,
    h(
      'div',
      { class: 'actions' },
      button('Check against the schema', {}, () => check(false)),
      button('Send edited output', { class: 'primary' }, () => check(true)),
    ),
    context.step?.outputSchema
      ? h('details', null, h('summary', null, 'Output schema'), jsonBlock(context.step.outputSchema, 'Output schema'))
      : null,
  );
  const editToggle = button('Edit output…', { 'aria-expanded': 'false' }, async () => {
    editArea.hidden = !editArea.hidden;
    editToggle.setAttribute('aria-expanded', String(!editArea.hidden));
    if (!editArea.hidden) editor.focus();
  });
  const element = h(
    'article',
    { class: 'approval-card', dataset: { approvalId: id }, 'aria-labelledby': `${domId}-q` },
    h(
      'header',
      null,
      h('h2', { id: `${domId}-q` }, approval.question),
      h(
        'span',
        { class: ['badge', `kind-${approval.kind}`] },
        approval.kind === 'review' ? 'review' : approval.kind === 'revision' ? 'plan revision' : 'approval',
      ),
    ),
    h(
      'p',
      { class: 'muted' },
      'Run ',
      h(
        'a',
        { href: `#/runs/${encodeURIComponent(approval.runId)}?step=${encodeURIComponent(approval.stepId)}` },
        context.objective ?? approval.runId,
      ),
      ' · step ',
      idWithCopy(approval.stepId, 'Copy step id'),
      context.step ? ` (${context.step.title}, ${context.step.target})` : '',
    ),
    h(
      'p',
      { class: 'deadline' },
      'Deadline ',
      h('time', { datetime: approval.deadline }, formatTime(approval.deadline)),
      h('span', { class: 'countdown' }, ` (${relative(approval.deadline)})`),
    ),
    h(
      'div',
      { class: 'io' },
      h(
        'div',
        null,
        h('h3', null, approval.kind === 'revision' ? 'Revision' : 'Step input'),
        jsonTree(approval.input ?? null, 'Step input'),
      ),
      h('div', null, h('h3', null, 'Upstream outputs'), jsonTree(approval.upstreamOutputs ?? {}, 'Upstream outputs')),
    ),
    approval.kind === 'review'
      ? h(
          'div',
          null,
          h('h3', null, `Held result (confidence ${Math.round((approval.heldConfidence ?? 0) * 100)}%)`),
          jsonTree(approval.heldOutput, 'Held result'),
        )
      : null,
    h('label', { for: comment.id }, 'Comment (optional)'),
    comment,
    h(
      'div',
      { class: 'actions' },
      button('Approve', { class: 'primary' }, () => decide('approve')),
      button('Reject', { class: 'danger' }, () => decide('reject')),
      // A plan revision is approved or rejected as a whole, never edited.
      approval.kind === 'revision' ? null : editToggle,
    ),
    editArea,
    result,
  );

  let busy = false;
  const setBusy = (value) => {
    busy = value;
    for (const b of buttons) b.disabled = value;
  };
  const finish = (text, cls) => {
    result.textContent = text;
    result.className = `result ${cls}`;
    for (const b of buttons) b.disabled = true;
    editArea.hidden = true;
    element.classList.add('decided');
    onDecided(id);
  };

  async function decide(decision, output) {
    if (busy) return;
    setBusy(true);
    result.textContent = 'Sending…';
    result.className = 'result';
    try {
      const body = {
        decision,
        ...(output === undefined ? {} : { output }),
        ...(comment.value.trim() ? { comment: comment.value.trim() } : {}),
      };
      const { approval: decided } = await post(`/approvals/${encodeURIComponent(id)}`, body);
      finish(`${DONE[decision]} by ${decided.decidedBy ?? 'you'} at ${formatTime(decided.decidedAt)}.`, 'ok');
    } catch (error) {
      const outcome = outcomeOf(error);
      if (outcome.final) finish(outcome.text, error.status === 410 ? 'expired' : 'conflict');
      else {
        result.textContent = outcome.text;
        result.className = 'result error';
        setBusy(false);
      }
    }
  }

  async function check(send) {
    if (busy) return;
    replaceChildren(checkList);
    let output;
    try {
      output = edited();
    } catch (error) {
      replaceChildren(checkList, h('li', null, `Not valid JSON: ${error.message}`));
      editor.setAttribute('aria-invalid', 'true');
      return;
    }
    setBusy(true);
    try {
      const verdict = await post(`/approvals/${encodeURIComponent(id)}/check`, { output });
      if (!verdict.valid) {
        editor.setAttribute('aria-invalid', 'true');
        replaceChildren(
          checkList,
          h('li', null, `Does not match the outputSchema of ${verdict.target}; nothing was sent:`),
          verdict.errors.map((e) => h('li', { class: 'mono' }, e)),
        );
        setBusy(false);
        return;
      }
      editor.removeAttribute('aria-invalid');
      setBusy(false);
      if (send) await decide('edit', output);
      else replaceChildren(checkList, h('li', { class: 'ok' }, 'The output matches the schema.'));
    } catch (error) {
      setBusy(false);
      const outcome = outcomeOf(error);
      replaceChildren(checkList, h('li', null, outcome.text));
    }
  }

  return {
    element,
    tick() {
      const countdown = element.querySelector('.countdown');
      if (countdown) countdown.textContent = ` (${relative(approval.deadline)})`;
    },
    gone() {
      if (element.classList.contains('decided')) return;
      finish('No longer pending: it was decided elsewhere or expired.', 'conflict');
    },
  };
}

export function approvalsPage(main) {
  const list = h('div', { class: 'approval-list', id: 'approval-list' });
  const note = h('p', { class: 'muted', role: 'status' });
  document.title = 'Approvals · cairn';
  replaceChildren(main, h('section', null, h('div', { class: 'page-head' }, h('h1', null, 'Approvals')), note, list));
  const cards = new Map();
  const decidedHere = new Set();
  const runs = new Map();
  let stopped = false;

  const contextOf = async (approval) => {
    const [step, objective] = await Promise.all([
      get(`/runs/${encodeURIComponent(approval.runId)}/steps/${encodeURIComponent(approval.stepId)}`)
        .then((d) => d.step)
        .catch(() => undefined),
      runs.has(approval.runId)
        ? Promise.resolve(runs.get(approval.runId))
        : get(`/runs/${encodeURIComponent(approval.runId)}`)
            .then((r) => {
              runs.set(approval.runId, r.objective);
              return r.objective;
            })
            .catch(() => undefined),
    ]);
    return { step, objective };
  };

  const refresh = async () => {
    const { approvals } = await get('/approvals?status=pending');
    if (stopped) return false;
    const pending = new Set(approvals.map((a) => a.approvalId));
    for (const [id, entry] of cards) if (!pending.has(id) && !decidedHere.has(id)) entry.gone();
    for (const approval of approvals) {
      if (cards.has(approval.approvalId)) continue;
      const entry = card(approval, await contextOf(approval), (id) => decidedHere.add(id));
      if (stopped) return false;
      cards.set(approval.approvalId, entry);
      list.append(entry.element);
    }
    for (const entry of cards.values()) entry.tick();
    note.textContent = approvals.length === 0 ? 'Nothing waits for a decision.' : `${approvals.length} pending.`;
    document.title = approvals.length ? `(${approvals.length}) Approvals · cairn` : 'Approvals · cairn';
    return true;
  };

  refresh().catch((error) => {
    note.textContent = `Could not load the approvals: ${error.message}`;
  });
  const timer = poll(refresh, Math.max(getConfig().pollMs, 1000) * 2);
  return {
    dispose() {
      stopped = true;
      timer.stop();
    },
  };
}
