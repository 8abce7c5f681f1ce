/**
 * Budgets as the decider keeps them: an attempt's spend is counted once (on its step and its run), a budget's soft
 * threshold is announced once per budget and dimension, a step over its own budget fails for good, and a run over
 * its budget starts nothing new: its unstarted steps are closed (unless `onExhausted: "pause"`, which leaves them to a
 * person) and it ends once what is in flight has finished (ending.ts).
 */
import type { StepError } from '../../../plan/schema.ts';
import type { StepRecord } from '../../../ports/records/steps.ts';
import { BUDGET_ERROR_CODE, checkBudget, describeExhaustion, round, secondsBetween, spentBy } from '../../budget.ts';
import type { Decision } from '../decision.ts';
import { closeOpenSteps } from './flow.ts';
import { planBudget, runBudget, runBudgetStop } from './run-budget.ts';

export { planBudget, type RunBudget, replanCap, runBudget, runBudgetStop } from './run-budget.ts';

/** Counts an attempt's spend once and announces the thresholds it crosses. */
export function countUsage(
  d: Decision,
  step: StepRecord,
  attempt: number,
  spend: { readonly tokens: number; readonly costUsd: number } | undefined,
): void {
  if (spend === undefined || (spend.tokens <= 0 && spend.costUsd <= 0)) return;
  const { stepId, generation } = step;
  d.emit({ type: 'UsageCounted', at: d.at, stepId, generation, attempt, tokens: spend.tokens, costUsd: spend.costUsd });
  // A run that has ended is told of no threshold (its audit log ends with RunFinished); a reopening warns afresh.
  if (d.run.status !== 'running' && d.run.status !== 'paused') return;
  warn(d, undefined, planBudget(d), spentBy(d.run));
  const after = d.step(stepId);
  if (after !== undefined) warn(d, stepId, d.plan?.byId.get(stepId)?.budget, spentBy(after));
}

function warn(
  d: Decision,
  stepId: string | undefined,
  budget: Parameters<typeof checkBudget>[0],
  spent: { tokens: number; costUsd: number },
): void {
  const { warned, warnAt } = checkBudget(budget, spent, undefined);
  for (const figure of warned) {
    if (figure.dimension === 'seconds') continue;
    const key = `${stepId ?? 'run'}#${figure.dimension}`;
    if ((d.run.budgetWarned ?? []).includes(key)) continue;
    d.emit({
      type: 'BudgetWarned',
      at: d.at,
      ...(stepId === undefined ? {} : { stepId }),
      dimension: figure.dimension,
      limit: figure.limit,
      spent: round(figure.spent),
      warnAt,
    });
  }
}

/** The failure of a step over its own budget (tokens, cost, or seconds since it started), if it is. */
export function stepOverBudget(d: Decision, step: StepRecord): StepError | undefined {
  const budget = d.plan?.byId.get(step.stepId)?.budget;
  if (budget === undefined) return undefined;
  const { exhausted } = checkBudget(budget, spentBy(step), secondsBetween(step.startedAt, d.at));
  if (exhausted.length === 0) return undefined;
  return {
    code: BUDGET_ERROR_CODE,
    message: describeExhaustion('step', exhausted),
    retryable: false,
    details: { exhausted: exhausted.map((f) => ({ ...f, spent: round(f.spent) })) },
  };
}

/**
 * Once the run's budget is spent nothing new starts: the steps that have not started close (under `pause` they stay,
 * for a person to decide on). Returns whether the budget is spent.
 */
export function stopOverBudget(d: Decision): boolean {
  const budget = runBudget(d);
  if (budget === undefined) return false;
  if (d.plan?.plan.budget?.onExhausted !== 'pause') {
    const steps = d.draft.steps;
    closeOpenSteps(d, runBudgetStop(`not started: ${budget.detail}`), (id) => {
      const status = steps.get(id)?.status;
      return status === 'pending' || status === 'ready';
    });
  }
  return true;
}
