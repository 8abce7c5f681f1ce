/**
 * Where the run stands against its plan's budget: spent (tokens, dollars, or seconds since the run was created) or
 * not. Once it is spent nothing new starts, and the steps it stops carry the run's scope in their error (a budget
 * replan may run them again).
 */
import type { Budget, StepError } from '../../../plan/schema.ts';
import {
  BUDGET_ERROR_CODE,
  type BudgetFigure,
  checkBudget,
  describeExhaustion,
  effectiveBudget,
  replanCapOf,
  round,
  secondsBetween,
  spentBy,
} from '../../budget.ts';
import { RUN_BUDGET_STOP } from '../../budget-replan.ts';
import type { Decision } from '../decision.ts';

export interface RunBudget {
  /** One line: the exhausted limits and their figures. */
  readonly detail: string;
  readonly evidence: Readonly<Record<string, unknown>>;
  readonly exhausted: readonly BudgetFigure[];
}

/** The budget the run is held to: its revision's, with the limits a person raised (engine/budget.ts). */
export const planBudget = (d: Decision): Budget | undefined => effectiveBudget(d.plan?.plan.budget, d.run.raisedBudget);

/** The replans the run may make: the deployment's limit, or the one a person raised it to. */
export const replanCap = (d: Decision): number => replanCapOf(d.run, d.draft.settings);

/** Where the run stands against its plan's budget now; undefined while it is not spent. */
export function runBudget(d: Decision): RunBudget | undefined {
  const budget = planBudget(d);
  if (budget === undefined) return undefined;
  const spent = spentBy(d.run);
  const check = checkBudget(budget, spent, secondsBetween(d.run.createdAt, d.at));
  if (check.exhausted.length === 0) return undefined;
  const { maxTokens, maxCostUsd, maxSeconds } = budget;
  const exhausted = check.exhausted.map((f) => ({ ...f, spent: round(f.spent) }));
  return {
    detail: describeExhaustion('run', check.exhausted),
    evidence: {
      limits: { maxTokens, maxCostUsd, maxSeconds },
      usage: { tokens: spent.tokens, costUsd: round(spent.costUsd) },
      exhausted,
    },
    exhausted,
  };
}

/** The error of a step the run's budget stopped (a budget replan may run it again). */
export const runBudgetStop = (message: string): StepError => ({
  code: BUDGET_ERROR_CODE,
  message,
  retryable: false,
  details: { ...RUN_BUDGET_STOP },
});
