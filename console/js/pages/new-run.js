/**
 * Starting a run: from an objective (the planner decomposes it), or from a plan as JSON, which is checked by the
 * server first (`POST /plans/validate`, as an untrusted plan) and shown issue by issue, field named, before anything
 * is sent. The start itself is confirmed in a dialog and carries an Idempotency-Key, so a retried request starts
 * one run; the page then opens the run.
 */
import { ApiFailure, post } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { confirmAction, userError } from '../ui/dialog.js';

function issuesOf(error) {
  if (error instanceof ApiFailure && error.issues) return error.issues;
  return undefined;
}

export function newRunPage(main) {
  document.title = 'New run · cairn';
  const mode = h('fieldset', { class: 'mode' }, h('legend', null, 'Start from'));
  const objectiveChoice = h('input', {
    type: 'radio',
    name: 'mode',
    value: 'objective',
    id: 'mode-objective',
    checked: true,
  });
  const planChoice = h('input', { type: 'radio', name: 'mode', value: 'plan', id: 'mode-plan' });
  mode.append(
    h('label', { class: 'check' }, objectiveChoice, ' an objective (the planner makes the plan)'),
    h('label', { class: 'check' }, planChoice, ' a plan (JSON)'),
  );
  const objective = h('textarea', {
    id: 'new-objective',
    rows: 3,
    maxlength: 2000,
    placeholder: 'What should the run achieve?',
  });
  const plan = h('textarea', {
    id: 'new-plan',
    class: 'json-editor',
    rows: 14,
    spellcheck: 'false',
    'aria-describedby': 'plan-issues',
    placeholder: '{ "schemaVersion": 1, "revision": 1, "objective": "…", "steps": [ … ] }',
  });
  const issues = h('ul', { class: 'check-errors', id: 'plan-issues', role: 'alert' });
  const result = h('p', { class: 'result', role: 'status', id: 'new-run-result' });
  const objectiveArea = h('div', null, h('label', { for: objective.id }, 'Objective'), objective);
  const planArea = h('div', { hidden: true }, h('label', { for: plan.id }, 'Plan (JSON)'), plan, issues);
  const sync = () => {
    objectiveArea.hidden = !objectiveChoice.checked;
    planArea.hidden = !planChoice.checked;
  };
  objectiveChoice.addEventListener('change', sync);
  planChoice.addEventListener('change', sync);

  /** Parses and validates the plan; shows every issue with its field; answers the plan when it is fit to run. */
  async function checkedPlan() {
    replaceChildren(issues);
    let parsed;
    try {
      parsed = JSON.parse(plan.value);
    } catch (error) {
      plan.setAttribute('aria-invalid', 'true');
      replaceChildren(issues, h('li', null, `Not valid JSON: ${error.message}`));
      return undefined;
    }
    try {
      await post('/plans/validate', { plan: parsed, generated: true });
    } catch (error) {
      const found = issuesOf(error);
      if (!found) throw error;
      plan.setAttribute('aria-invalid', 'true');
      replaceChildren(
        issues,
        h('li', null, `${error.message}; nothing was sent:`),
        found.map((i) => h('li', { class: 'mono' }, `${i.path || '(plan)'}: ${i.message} (${i.code})`)),
      );
      return undefined;
    }
    plan.removeAttribute('aria-invalid');
    replaceChildren(issues, h('li', { class: 'ok' }, `The plan is valid: ${parsed.steps?.length ?? 0} steps.`));
    return parsed;
  }

  const validate = h('button', { type: 'button', id: 'validate-plan' }, 'Validate the plan');
  validate.addEventListener('click', async () => {
    try {
      await checkedPlan();
    } catch (error) {
      replaceChildren(issues, h('li', null, `Could not check it: ${error.message}`));
    }
  });

  const start = h('button', { type: 'button', class: 'primary', id: 'start-run' }, 'Start the run…');
  start.addEventListener('click', async () => {
    let body;
    if (objectiveChoice.checked) {
      if (objective.value.trim() === '') {
        result.textContent = 'Write an objective first.';
        return;
      }
      body = { objective: objective.value.trim() };
    } else {
      const parsed = await checkedPlan().catch((error) => {
        replaceChildren(issues, h('li', null, `Could not check it: ${error.message}`));
        return undefined;
      });
      if (!parsed) return;
      body = { plan: parsed };
    }
    await confirmAction({
      title: 'Start this run?',
      body: body.plan
        ? `The plan “${body.plan.objective}” (${body.plan.steps.length} steps) runs now.`
        : `The planner plans “${body.objective}” and the run starts.`,
      confirmLabel: 'Start',
      run: async () => {
        const answer = await post('/runs', body, { idempotent: true });
        if (!answer?.runId) throw userError('The server answered without a run id.');
        return answer.runId;
      },
      onDone: (runId) => {
        location.hash = `#/runs/${encodeURIComponent(runId)}`;
      },
    });
  });

  replaceChildren(
    main,
    h(
      'section',
      { class: 'new-run' },
      h('div', { class: 'page-head' }, h('h1', null, 'New run')),
      mode,
      objectiveArea,
      planArea,
      h('div', { class: 'actions' }, h('span', { hidden: true }), validate, start),
      result,
    ),
  );
  const syncValidate = () => {
    validate.hidden = !planChoice.checked;
  };
  objectiveChoice.addEventListener('change', syncValidate);
  planChoice.addEventListener('change', syncValidate);
  syncValidate();
  return { dispose() {} };
}
