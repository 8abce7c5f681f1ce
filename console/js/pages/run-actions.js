/**
 * What a person can do to a whole run from its page: cancel it (optionally undoing its finished mutating steps,
 * `compensate`), replan it with a reason and, if they like, a new objective, and give a run paused for its budget
 * or its replan limit larger limits. Each asks first in a dialog and says plainly what the server answered: a
 * replan is a planning job, followed until it made a revision, waits for an approval, or failed with the
 * planner's code.
 */
import { get, post } from '../api.js';
import { h } from '../dom.js';
import { confirmAction, field, userError } from '../ui/dialog.js';

const TERMINAL = new Set(['complete', 'failed', 'cancelled']);
const JOB_POLL_MS = 700;
const JOB_WAIT_MS = 120_000;

function cancelDialog(run, onActed) {
  const compensate = h('input', { type: 'checkbox', id: 'cancel-compensate', name: 'compensate' });
  return confirmAction({
    title: 'Cancel this run?',
    body: `“${run.objective}” stops: nothing new starts, and steps in flight are stopped.`,
    fields: [
      h('label', { class: 'check' }, compensate, ' Undo the finished mutating steps (compensate) before it ends'),
    ],
    confirmLabel: 'Cancel the run',
    danger: true,
    run: async () => {
      const answer = await post(`/runs/${encodeURIComponent(run.runId)}/cancel`, { compensate: compensate.checked });
      // A large run's cancel may outlast the API's wait (202, pending): the page shows the run as it is decided.
      if (answer.decision === 'pending') return 'Cancel sent: the run is being cancelled.';
      return `Cancel sent: the run is ${answer.status}${compensate.checked ? ', undoing its finished steps' : ''}.`;
    },
    onDone: onActed,
  });
}

/** Follows a planning job until it ends; what to say about how it ended. */
async function followJob(jobId) {
  const started = Date.now();
  for (;;) {
    const job = await get(`/plans/${encodeURIComponent(jobId)}`);
    if (job.status === 'succeeded') {
      if (job.approvalId) return `The new plan waits for approval (${job.approvalId}) in the inbox.`;
      return `Replanned: revision ${job.revision ?? '?'} is current.`;
    }
    if (job.status === 'failed') throw userError(`The replan failed (${job.error?.code}): ${job.error?.message}`);
    if (Date.now() - started > JOB_WAIT_MS) return `The replan is still being planned (job ${jobId}).`;
    await new Promise((resolve) => setTimeout(resolve, JOB_POLL_MS));
  }
}

function replanDialog(run, onActed) {
  const reason = h('textarea', { id: 'replan-reason', rows: 3, maxlength: 2000 });
  const objective = h('textarea', { id: 'replan-objective', rows: 2, maxlength: 2000 });
  objective.value = run.objective;
  return confirmAction({
    title: 'Replan this run',
    body: 'The planner revises the plan; finished work is kept where the new plan still has it.',
    fields: [
      field('Reason', reason, 'Why the plan must change (the planner reads it).'),
      field('Objective', objective, 'Change it to re-aim the run; leave it to keep the objective.'),
    ],
    confirmLabel: 'Replan',
    run: async () => {
      if (reason.value.trim() === '') throw userError('Say why the plan must change.');
      const body = { reason: reason.value.trim() };
      if (objective.value.trim() && objective.value.trim() !== run.objective) body.objective = objective.value.trim();
      const job = await post(`/runs/${encodeURIComponent(run.runId)}/replan`, body);
      return followJob(job.jobId);
    },
    onDone: onActed,
  });
}

/** The pauses a person answers with larger limits (POST /runs/{id}/budget). */
const LIMIT_PAUSES = new Set(['budget_exhausted', 'max_replans']);

/** The limits a raise may name, with their labels; each field starts at the run's limit now. */
const LIMITS = [
  ['maxTokens', 'Tokens', '1'],
  ['maxCostUsd', 'Dollars', 'any'],
  ['maxSeconds', 'Seconds (since the run was created)', 'any'],
  ['maxReplans', 'Replans', '1'],
];

function budgetDialog(run, onActed) {
  const now = { ...run.budget, maxReplans: run.maxReplans ?? run.terminal?.evidence?.maxReplans };
  const inputs = LIMITS.filter(([name]) => now[name] !== undefined || name === 'maxReplans').map(
    ([name, label, step]) => {
      const input = h('input', { type: 'number', id: `budget-${name}`, name, min: 0, step });
      if (now[name] !== undefined) input.value = String(now[name]);
      return [name, input, field(label, input, now[name] === undefined ? null : `now ${now[name]}`)];
    },
  );
  return confirmAction({
    title: 'Raise the limits of this run',
    body: `The run is paused (${run.terminal?.reason}). Raise what holds it; it goes on where it paused.`,
    fields: inputs.map(([, , node]) => node),
    confirmLabel: 'Raise and resume',
    run: async () => {
      const body = {};
      for (const [name, input] of inputs) {
        const value = Number(input.value);
        if (input.value !== '' && value !== now[name]) body[name] = value;
      }
      if (Object.keys(body).length === 0) throw userError('Change at least one limit.');
      const answer = await post(`/runs/${encodeURIComponent(run.runId)}/budget`, body);
      return `Limits raised: the run is ${answer.status}.`;
    },
    onDone: onActed,
  });
}

/** The run's action buttons, for its current state; `onActed(message)` after the server took an action. */
export function runActions(run, onActed) {
  const live = !TERMINAL.has(run.status);
  return h(
    'div',
    { class: 'run-actions' },
    live && !run.cancelling
      ? h(
          'button',
          { type: 'button', class: 'danger', id: 'cancel-run', onclick: () => cancelDialog(run, onActed) },
          'Cancel…',
        )
      : null,
    run.status === 'cancelled' || run.revision < 1
      ? null
      : h('button', { type: 'button', id: 'replan-run', onclick: () => replanDialog(run, onActed) }, 'Replan…'),
    run.status === 'paused' && LIMIT_PAUSES.has(run.terminal?.reason)
      ? h('button', { type: 'button', id: 'raise-budget', onclick: () => budgetDialog(run, onActed) }, 'Raise limits…')
      : null,
  );
}
