/**
 * The details of one step, beside the graph: definition and status, input and output, attempts with their errors
 * and evidence, confidence, the reasoning trace, approvals, and the generation history.
 */
import { get, post } from '../api.js';
import { between, facts, formatDuration, formatTime, h, jsonBlock, replaceChildren, statusBadge } from '../dom.js';
import { idWithCopy } from '../ui/copy.js';
import { confirmAction, field } from '../ui/dialog.js';
import { jsonTree } from '../ui/json-tree.js';

/** Steps that can run again from here: finished, or stopped for good (invalidate starts a new generation). */
const RERUNNABLE = new Set(['succeeded', 'failed', 'blocked', 'skipped', 'cancelled', 'compensated']);

/**
 * "Rerun from here": invalidates the step (a group: all its steps), so it and everything downstream of it run again
 * as a new generation; upstream results are kept and a finished run reopens.
 */
function rerunAction(detail, onActed) {
  if (!RERUNNABLE.has(detail.status)) return null;
  const open = () => {
    const reason = h('textarea', { id: 'rerun-reason', rows: 2, maxlength: 2000 });
    return confirmAction({
      title: `Rerun from “${detail.step.title}”?`,
      body: 'This step and every step downstream of it run again as a new generation; the steps upstream keep their results, and a finished run reopens.',
      fields: [field('Reason (optional)', reason)],
      confirmLabel: 'Rerun from here',
      run: async () => {
        const body = reason.value.trim() ? { reason: reason.value.trim() } : {};
        const answer = await post(
          `/runs/${encodeURIComponent(detail.runId)}/steps/${encodeURIComponent(detail.step.id)}/invalidate`,
          body,
          { idempotent: true },
        );
        const count = answer.stepIds.length;
        return `Rerunning ${count} step${count === 1 ? '' : 's'}${answer.reopened ? '; the run reopened' : ''}.`;
      },
      onDone: (text) => onActed(text),
    });
  };
  return h(
    'div',
    { class: 'actions panel-actions' },
    h('button', { type: 'button', id: 'rerun-step', onclick: open }, 'Rerun from here…'),
  );
}

const TRACE_TAGS = { plan: '[plan]', exec: '[exec]', judge: '[judge]', fail: '[fail]' };

/**
 * A compensation that failed for good holds the run for a person: retry it, or say it was undone by hand (with a
 * note). Either reopens the run (POST /runs/{id}/steps/{stepId}/compensation); a 409 (someone acted first, or it no
 * longer failed) is said plainly.
 */
function compensationActions(detail, onActed) {
  if (detail.status !== 'compensation_failed') return null;
  const message = h('p', { class: 'muted', role: 'status' });
  const note = h('textarea', {
    id: 'compensation-note',
    rows: 2,
    maxlength: 2000,
    'aria-label': 'How the effect was undone by hand',
    placeholder: 'How the effect was undone by hand',
  });
  const act = async (body) => {
    message.textContent = 'Sending…';
    try {
      await post(
        `/runs/${encodeURIComponent(detail.runId)}/steps/${encodeURIComponent(detail.step.id)}/compensation`,
        body,
      );
      message.textContent = body.action === 'retry' ? 'Compensation retried: the run goes on.' : 'Resolved by hand.';
      await onActed();
    } catch (error) {
      message.textContent = error.status === 409 ? `Not done: ${error.message}` : `Could not send it: ${error.message}`;
    }
  };
  return section(
    'The compensation failed: a person must act',
    h(
      'button',
      { type: 'button', id: 'retry-compensation', onclick: () => act({ action: 'retry' }) },
      'Retry compensation',
    ),
    note,
    h(
      'button',
      {
        type: 'button',
        id: 'resolve-compensation',
        onclick: () => {
          if (note.value.trim() === '') message.textContent = 'Say how it was undone first.';
          else void act({ action: 'resolve', note: note.value });
        },
      },
      'Mark resolved by hand',
    ),
    message,
  );
}

/** How a mutating step is undone: its rollbackHint (a person acts on it) and, once one ran, its compensation. */
function compensationView(detail, onActed) {
  const { step, record } = detail;
  const done = record?.compensation;
  return [
    step.rollbackHint ? section('Rollback hint', h('p', null, step.rollbackHint)) : null,
    done
      ? section(
          'Compensation',
          facts([
            ['Target', h('span', { class: 'mono' }, done.target)],
            ['Attempts', String(done.attempts)],
            ['Idempotency key', h('span', { class: 'mono' }, done.idempotencyKey)],
            ['Started', formatTime(done.startedAt)],
            ['Finished', formatTime(done.finishedAt)],
            done.round ? ['Retried', `${done.round} time(s) by a person, last by ${done.retriedBy ?? '—'}`] : null,
            done.resolution ? ['Resolved by hand', `${done.resolution.by ?? '—'}: ${done.resolution.note}`] : null,
          ]),
          jsonBlock(done.input ?? null, 'Compensation input'),
          done.error ? errorView(done.error) : jsonBlock(done.output ?? null, 'Compensation output'),
        )
      : null,
    compensationActions(detail, onActed),
  ];
}

function section(title, ...content) {
  return h('section', { class: 'panel-section' }, h('h3', null, title), ...content);
}

function confidenceText(confidence, threshold) {
  if (confidence === null || confidence === undefined) return '—';
  const value = `${Math.round(confidence * 100)}%`;
  if (threshold === undefined) return value;
  return `${value} (threshold ${Math.round(threshold * 100)}%${confidence < threshold ? ', below: held for review' : ''})`;
}

function expectedText(failure) {
  const parts = [
    failure.code ? `code /${failure.code}/` : null,
    failure.message ? `message /${failure.message}/` : null,
  ].filter(Boolean);
  return parts.length ? `with ${parts.join(' and ')}` : 'any failure';
}

function errorView(error) {
  if (!error) return null;
  return h(
    'p',
    { class: 'error-box' },
    h('strong', null, error.code),
    ': ',
    error.message,
    error.retryable ? ' (retryable)' : '',
  );
}

function attemptsTable(attempts) {
  if (attempts.length === 0) return h('p', { class: 'muted' }, 'No attempts yet.');
  return h(
    'ol',
    { class: 'attempts' },
    attempts.map((a) =>
      h(
        'li',
        { class: `outcome-${a.outcome}` },
        h(
          'div',
          { class: 'attempt-head' },
          h('strong', null, `Generation ${a.generation} · attempt ${a.attempt}`),
          ' ',
          h('span', { class: ['badge', `outcome-${a.outcome}`] }, a.outcome),
          ' ',
          h(
            'span',
            { class: 'muted' },
            `${formatTime(a.startedAt)} · ${formatDuration(between(a.startedAt, a.finishedAt))}`,
          ),
        ),
        errorView(a.error),
        a.confidence === null || a.confidence === undefined
          ? null
          : h('p', null, `Confidence ${confidenceText(a.confidence)}`),
        h('details', null, h('summary', null, 'Input'), jsonBlock(a.input, 'Attempt input')),
        a.output === undefined
          ? null
          : h('details', null, h('summary', null, 'Output'), jsonTree(a.output, 'Attempt output')),
        h('details', null, h('summary', null, 'Evidence'), jsonBlock(a.evidence, 'Attempt evidence')),
      ),
    ),
  );
}

function traceList(trace) {
  if (!trace || trace.length === 0) return h('p', { class: 'muted' }, 'No trace.');
  return h(
    'ol',
    { class: 'trace' },
    trace.map((entry) =>
      h(
        'li',
        null,
        h('span', { class: `tag tag-${entry.kind}` }, TRACE_TAGS[entry.kind] ?? entry.kind),
        ' ',
        h('time', { datetime: entry.at }, formatTime(entry.at)),
        ' ',
        entry.text,
      ),
    ),
  );
}

function approvalsList(approvals) {
  if (approvals.length === 0) return null;
  return section(
    'Approvals',
    h(
      'ul',
      { class: 'plain' },
      approvals.map((a) =>
        h(
          'li',
          null,
          h('strong', null, a.kind === 'review' ? 'Review: ' : 'Approval: '),
          a.question,
          ' — ',
          h('span', { class: ['badge', `approval-${a.status}`] }, a.status),
          a.decidedBy ? ` by ${a.decidedBy}` : '',
          a.comment ? ` (“${a.comment}”)` : '',
          a.status === 'pending' ? [' ', h('a', { href: '#/approvals' }, 'Decide in the inbox')] : null,
        ),
      ),
    ),
  );
}

function history(detail) {
  if (detail.generations.length === 0 && detail.events.length === 0) return null;
  return section(
    'Generation history',
    h(
      'ul',
      { class: 'plain' },
      detail.generations.map((g) =>
        h(
          'li',
          null,
          `Generation ${g.generation}${g.current ? ' (current)' : ' (superseded)'}: ${g.attempts} attempt${g.attempts === 1 ? '' : 's'}`,
          g.outcome ? `, last ${g.outcome}` : '',
          g.startedAt ? `, ${formatTime(g.startedAt)}` : '',
        ),
      ),
    ),
    detail.events.length === 0
      ? null
      : h(
          'details',
          null,
          h('summary', null, `Events (${detail.events.length})`),
          h(
            'ol',
            { class: 'plain small' },
            detail.events.map((e) =>
              h('li', null, `${formatTime(e.at)} ${e.type}${e.generation ? ` (g${e.generation})` : ''}`),
            ),
          ),
        ),
  );
}

function render(detail, onActed) {
  const { step, record } = detail;
  const lastAttempt = detail.attempts.at(-1);
  const input = lastAttempt?.input !== undefined ? lastAttempt.input : step.input;
  return [
    h(
      'header',
      { class: 'panel-head' },
      h('h2', { id: 'panel-title', tabindex: '-1' }, step.title),
      statusBadge(detail.status),
    ),
    facts([
      ['Step', idWithCopy(step.id, 'Copy step id')],
      ['Target', h('span', { class: 'mono' }, step.target ?? 'group')],
      step.description ? ['Description', step.description] : null,
      ['Depends on', step.dependsOn.length ? step.dependsOn.join(', ') : '—'],
      step.successCriteria
        ? [
            'Success criteria',
            step.successCriteria.assert || step.successCriteria.outputSchema
              ? [
                  step.successCriteria.description,
                  step.successCriteria.assert ? [' ', h('code', null, step.successCriteria.assert)] : null,
                  step.successCriteria.outputSchema ? ' (and a stricter output schema)' : null,
                ]
              : `${step.successCriteria.description} (a note: nothing checks it)`,
          ]
        : null,
      step.expect ? ['Expected to fail', expectedText(step.expect.failure)] : null,
      step.segment ? ['Segment', h('span', { class: 'mono' }, step.segment)] : null,
      record ? ['Generation', String(record.generation)] : null,
      record
        ? ['Attempts', `${record.attempts}${step.maxRetries !== undefined ? ` (max retries ${step.maxRetries})` : ''}`]
        : null,
      ['Confidence', confidenceText(record?.confidence, step.confidenceThreshold)],
      ['Started', formatTime(record?.startedAt)],
      ['Finished', formatTime(record?.finishedAt)],
      ['Duration', formatDuration(between(record?.startedAt, record?.finishedAt))],
      [
        'Estimate',
        step.estimatedDurationSeconds === undefined ? '—' : formatDuration(step.estimatedDurationSeconds * 1000),
      ],
      detail.children.length ? ['Contains', detail.children.join(', ')] : null,
    ]),
    rerunAction(detail, onActed),
    errorView(record?.error),
    // A mutating step says how to undo it; a person acting on a failure needs that next to the error.
    step.rollbackHint
      ? section('How to undo it', h('p', { class: 'rollback-hint', id: 'rollback-hint' }, step.rollbackHint))
      : null,
    detail.kind === 'group'
      ? null
      : [
          section(
            lastAttempt?.input !== undefined ? 'Input (as resolved for the last attempt)' : 'Input (as planned)',
            jsonTree(input, 'Step input'),
          ),
          section('Output', h('div', { id: 'step-output' }, jsonTree(record?.output ?? null, 'Step output'))),
          section('Attempts', attemptsTable(detail.attempts)),
          section('Reasoning trace', traceList(record?.trace)),
        ],
    compensationView(detail, onActed),
    approvalsList(detail.approvals),
    history(detail),
    step.approval ? section('Approval question', h('p', null, step.approval.question)) : null,
    step.outputSchema
      ? h(
          'details',
          { class: 'panel-section' },
          h('summary', null, 'Output schema'),
          jsonBlock(step.outputSchema, 'Output schema'),
        )
      : null,
  ];
}

export function stepPanel(runId, onClose, { onActed } = {}) {
  const body = h('div', { class: 'panel-body' });
  const close = h(
    'button',
    { type: 'button', class: 'close', 'aria-label': 'Close step details', onclick: () => onClose() },
    '×',
  );
  // What the last action from the panel did: kept while the step's details are read again after it.
  const notice = h('p', { class: 'notice', role: 'status', id: 'panel-notice' });
  const element = h(
    'aside',
    { class: 'step-panel', id: 'step-panel', 'aria-labelledby': 'panel-title', hidden: true },
    close,
    notice,
    body,
  );
  let shown;
  let fingerprint;

  const load = async (stepId, focus) => {
    const detail = await get(`/runs/${encodeURIComponent(runId)}/steps/${encodeURIComponent(stepId)}`);
    if (shown !== stepId) return;
    fingerprint = `${detail.status}/${detail.record?.generation ?? ''}/${detail.record?.attempts ?? 0}`;
    replaceChildren(
      body,
      render(detail, async (text) => {
        if (text) notice.textContent = text;
        await onActed?.();
        await load(stepId, false);
      }),
    );
    if (focus) document.getElementById('panel-title')?.focus();
  };

  return {
    element,
    async show(stepId) {
      if (shown !== stepId) notice.textContent = '';
      shown = stepId;
      element.hidden = false;
      replaceChildren(body, h('p', { class: 'muted' }, 'Loading…'));
      try {
        await load(stepId, true);
      } catch (error) {
        replaceChildren(
          body,
          h('p', { class: 'error', role: 'alert' }, `Could not load step ${stepId}: ${error.message}`),
        );
      }
    },
    hide() {
      shown = undefined;
      element.hidden = true;
    },
    /** Reloads the open step when the run view says it moved. */
    async refresh(run) {
      if (!shown) return;
      const step = run.steps.find((s) => s.id === shown);
      if (!step) return;
      if (`${step.status}/${step.generation ?? ''}/${step.attempts}` === fingerprint) return;
      await load(shown, false);
    },
  };
}
