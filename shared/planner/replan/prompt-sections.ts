/**
 * The replan part of a model's brief: the current plan (definitions only: outputs travel in the bounded history,
 * never in the plan), the scope rule naming the steps that may change, what already ran, the failure diagnosis and
 * what earlier replans tried; for a person's replan, their reason and new objective; for a budget replan, the
 * figures and what the revision may spend. Empty for a first plan.
 */
import { stripLifecycle } from '../../engine/replan.ts';
import type {
  BudgetReplanRequest,
  PlanDiagnosis,
  PlanModelRequest,
  PriorReplan,
  ReplanScope,
  RequestedReplan,
} from '../../ports/plan-model.ts';

const list = (ids: readonly string[]): string => (ids.length > 0 ? ids.join(', ') : '(none)');

function scopeRule(revision: number, scope: ReplanScope | undefined): string {
  if (scope?.finishedMayChange === true)
    return (
      `This is a replan of revision ${revision} that a person asked for: answer with the whole plan as revision ` +
      `${revision + 1}. You may change, add or remove any step, but keep every finished step (same id): one you ` +
      'leave exactly as it is keeps its output, one you change runs again, and so does everything that depends on ' +
      'it. Change only what the request needs.'
    );
  const head =
    `This is a replan of revision ${revision}: answer with the whole plan as revision ${revision + 1}. Keep every ` +
    'finished step (same id, unchanged) and change only the failed step and what depends on it.';
  if (scope === undefined) return head;
  return (
    `${head} The steps you may change, replace or remove: ${list(scope.steps)}. You may add new steps. Copy every ` +
    'other step exactly as it is in the current plan (same id, same fields, same dependsOn and parentId), and do ' +
    'not put new steps into a group that one of those steps depends on.'
  );
}

function diagnosisText(d: PlanDiagnosis): string {
  const lines = [
    `Failure to plan around: step ${d.stepId}${d.target ? ` (${d.target})` : ''} failed with ${d.code}: ${d.message}`,
  ];
  if (d.trigger) lines.push(`Trigger: ${d.trigger.replace(/_/g, ' ')}.`);
  if (d.attempts !== undefined)
    lines.push(
      `Attempts: ${d.attempts}${d.retryable === undefined ? '' : `; the error is ${d.retryable ? '' : 'not '}retryable`}.`,
    );
  if (d.trace?.length) lines.push(`Its last trace entries:\n${d.trace.map((t) => `  ${t}`).join('\n')}`);
  if (d.finished) lines.push(`Finished steps (kept as they are): ${list(d.finished)}`);
  if (d.blocked) lines.push(`Steps waiting for this replan: ${list(d.blocked)}`);
  return lines.join('\n');
}

function budgetText(budget: BudgetReplanRequest): string {
  const figures = budget.figures.map((f) => `${f.dimension}: ${f.spent} spent of ${f.limit}`).join('; ');
  const allowance = Object.entries(budget.allowance)
    .map(([dimension, left]) => `${dimension} ${left}`)
    .join(', ');
  return [
    `Trigger: ${budget.trigger}. The run's budget is exhausted (${figures}). Make the steps that have not run cheaper: drop what the objective ` +
      'can do without, prefer cheaper capabilities, or give steps a `budget` of their own.',
    `What was spent stays spent. The revision gets its budget from the engine (do not set one): the steps left to ` +
      `run may spend at most ${allowance} in all, and a run over that ends budget_exhausted.`,
  ].join('\n');
}

function requestText(requested: RequestedReplan): string {
  const lines = [`A person asked for this replan. Their reason: ${requested.reason}`];
  if (requested.objective !== undefined)
    lines.push(
      `They set a new objective, the one given above (the current plan's was another): ${requested.objective}`,
    );
  return lines.join('\n');
}

function priorText(replan: PriorReplan): string {
  const { change } = replan;
  const failure = `step ${replan.stepId}${replan.target ? ` (${replan.target})` : ''} failed with ${replan.code}`;
  const what =
    change.kind === 'substitute'
      ? `${change.stepId} moved from ${change.from} to ${change.to}`
      : change.kind === 'method'
        ? `another method for ${change.path || 'the objective'} (not ${change.from})`
        : change.kind === 'budget'
          ? 'the plan was made cheaper after its budget ran out'
          : 'the plan was rewritten';
  return `- revision ${replan.revision}: ${failure}; ${what}`;
}

export function replanSections(request: PlanModelRequest): string[] {
  const sections: string[] = [];
  const previous = request.previousPlan;
  if (previous) {
    sections.push(scopeRule(previous.revision, request.scope));
    sections.push(`Current plan:\n${JSON.stringify(stripLifecycle(previous))}`);
  }
  if (request.history?.length)
    sections.push(
      `What already ran:\n${request.history
        .map((h) => `- ${h.stepId} [${h.status}] ${h.title}${h.summary ? `: ${h.summary}` : ''}`)
        .join('\n')}`,
    );
  if (request.requested) sections.push(requestText(request.requested));
  if (request.diagnosis) sections.push(diagnosisText(request.diagnosis));
  if (request.budget) sections.push(budgetText(request.budget));
  if (request.replans?.length)
    sections.push(
      `Earlier replans of this run (do not repeat what failed):\n${request.replans.map(priorText).join('\n')}`,
    );
  return sections;
}
